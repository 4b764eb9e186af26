package ops

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// A GPU runs tens of thousands of threads at once; a kernel with one item
// per output of a reduction that has few outputs and many terms each
// (a channel's statistics over a batch of images, a convolution's weight
// gradient) leaves most of them idle while a few add tens of thousands
// of terms one after another. Such a sum is split: a first kernel has one
// item per output and chunk, adding the chunk's terms in double into a
// scratch buffer, and a second one item per output, adding its chunks'
// partial sums. Chunk j of an output holds the terms t ≡ j (mod chunks),
// so that neighbouring items read neighbouring memory.

// Bounds of the split: a sum of fewer than splitFrom terms is not split
// (a second launch would cost more than it saves); no chunk holds more
// than maxChunkTerms terms; within that, an output has as many chunks as
// give the first kernel about splitItems items, but no more than
// maxChunks, nor so many that a chunk holds fewer than minChunkTerms
// terms.
const (
	splitFrom     = 256
	maxChunkTerms = 1024
	minChunkTerms = 32
	maxChunks     = 1024
	splitItems    = 1 << 16
)

// splitSum is how a sum of count terms for each of outputs outputs runs:
// in chunks chunks (1: one kernel, no split).
type splitSum struct{ outputs, count, chunks int64 }

// newSplitSum chooses the chunks of a sum of count terms for each of
// outputs outputs, within the bounds above.
func newSplitSum(outputs, count int64) splitSum {
	if count < splitFrom {
		return splitSum{outputs: outputs, count: count, chunks: 1}
	}
	least := ceilDiv(count, maxChunkTerms)
	most := max(least, min(maxChunks, count/minChunkTerms))
	want := ceilDiv(splitItems, max(outputs, 1))
	return splitSum{outputs: outputs, count: count, chunks: max(1, min(max(want, least), most))}
}

// ceilDiv is ⌈a/b⌉ for a ≥ 0 and b > 0.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// terms is the most terms one item of the first kernel adds.
func (s splitSum) terms() int64 { return ceilDiv(s.count, s.chunks) }

// scratch is the number of doubles the partial sums take (0 unsplit).
func (s splitSum) scratch() int64 {
	if s.chunks == 1 {
		return 0
	}
	return s.outputs * s.chunks
}

// kernels are the kernels of the sum, extra doubles of scratch after the
// partial sums' for final's use. Each output r (a long long) runs setup,
// then term for each of its terms t (a long long), which adds to the
// double acc (it may continue to skip a term); final then has the whole
// sum in acc, and the output as i and r.
func (s splitSum) kernels(setup, term, final string, extra int64, helpers string) []graph.CUDASource {
	scratch := s.scratch() + extra
	if s.chunks == 1 {
		body := fmt.Sprintf("const long long r = i;\n%sdouble acc = 0;\nfor (long long t = 0; t < %dLL; t++) {\n%s\n}\n%s",
			setup, s.count, term, final)
		return []graph.CUDASource{{N: s.outputs, Body: body, Scratch: scratch, Work: s.count, Helpers: helpers}}
	}
	partial := fmt.Sprintf("const long long r = i / %[1]dLL;\n%[2]sdouble acc = 0;\nfor (long long t = i %% %[1]dLL; t < %[3]dLL; t += %[1]dLL) {\n%[4]s\n}\nscratch[i] = acc;\n",
		s.chunks, setup, s.count, term)
	sum := fmt.Sprintf("const long long r = i;\ndouble acc = 0;\nfor (long long j = 0; j < %[1]dLL; j++) acc += scratch[i * %[1]dLL + j];\n%s",
		s.chunks, final)
	return []graph.CUDASource{
		{N: s.outputs * s.chunks, Body: partial, Scratch: scratch, Work: s.terms(), Helpers: helpers},
		{N: s.outputs, Body: sum, Scratch: scratch, Work: s.chunks, Helpers: helpers},
	}
}
