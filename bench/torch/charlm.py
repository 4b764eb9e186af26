"""The character transformer of examples/charlm in PyTorch eager: one
training step (forward, cross-entropy, backward, gradient clipping to norm
1, Adam with learning rate 3e-3) of its default model on a batch of 32
windows of 64 characters, float32, the workload
`go test -run '^$' -bench Step ./examples/charlm/` times in nabla.

The model: token and learned position embeddings (vocabulary 62, width
64), two causal pre-norm nn.TransformerEncoderLayer blocks (4 heads,
feed-forward 256, exact GELU, no dropout), a final LayerNorm and a linear
head. Prints, per thread count, the wall-clock and the CPU milliseconds a
step (ms/step; cpu-ms/step, the thread's CPU time on one thread and the
process's on more; BenchmarkStep reports the same); skipped without
torch.
"""

import time

import common

torch = common.require_torch()
nn = torch.nn

VOCAB, CONTEXT, EMBED, HEADS, LAYERS, FF, BATCH = 62, 64, 64, 4, 2, 256, 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, EMBED)
        self.pos_emb = nn.Embedding(CONTEXT, EMBED)
        nn.init.normal_(self.tok_emb.weight, 0, 0.02)
        nn.init.normal_(self.pos_emb.weight, 0, 0.02)
        self.blocks = nn.ModuleList([
            nn.TransformerEncoderLayer(EMBED, HEADS, FF, dropout=0.0, activation="gelu",
                                       batch_first=True, norm_first=True)
            for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(EMBED)
        self.head = nn.Linear(EMBED, VOCAB)
        self.register_buffer("mask", torch.triu(torch.full((CONTEXT, CONTEXT), float("-inf")), diagonal=1))

    def forward(self, x):
        h = self.tok_emb(x) + self.pos_emb.weight
        for b in self.blocks:
            h = b(h, src_mask=self.mask)
        return self.head(self.ln_f(h.reshape(-1, EMBED)))


def main():
    torch.manual_seed(1)
    x = torch.randint(0, VOCAB, (BATCH, CONTEXT))
    y = torch.randint(0, VOCAB, (BATCH, CONTEXT))
    for threads in common.threads():
        torch.set_num_threads(threads)
        model = Model()
        model.train()
        opt = torch.optim.Adam(model.parameters(), lr=3e-3)

        def step():
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(x), y.reshape(-1))
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()

        common.report(f"CharLM f32 threads={threads}", "ms/step", common.measure(step, 1e3))
        # On one thread the step runs on this thread alone: another thread
        # of the process (an idle pool's, unless OMP_NUM_THREADS=1) may
        # spin without doing the step's work, so the thread's time is the
        # step's.
        clock = time.thread_time if threads == 1 else time.process_time
        common.report(f"CharLM f32 threads={threads}", "cpu-ms/step", common.measure_cpu(step, clock) * 1e3)


if __name__ == "__main__":
    main()
