package main

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/nabla-go/nabla/internal/testkit/cputime"
	"github.com/nabla-go/nabla/vm"
)

// benchVocab is the size of testdata/shakespeare.txt's vocabulary, the
// model's when trained on it.
const benchVocab = 62

// BenchmarkStep times one training step (forward, backward, clipping and
// Adam) of DefaultConfig's model on a batch of random windows, float32,
// on one thread and on GOMAXPROCS; bench/torch/charlm.py is the same
// step in PyTorch. Besides wall time per step it reports cpu-ms/step, the
// process's CPU time per step, which on a shared machine leaves out the
// time spent waiting for a core:
//
//	go test -run '^$' -bench Step ./examples/charlm/
func BenchmarkStep(b *testing.B) {
	threads := []int{1}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		threads = append(threads, n)
	}
	for _, n := range threads {
		b.Run(fmt.Sprintf("f32/threads=%d", n), func(b *testing.B) {
			s, feeds := newBenchStep(b, vm.WithThreads(n))
			defer s.runner.Machine().Close()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0, cpuOK := cputime.Process()
			for range b.N {
				if err := s.runner.Run(feeds); err != nil {
					b.Fatal(err)
				}
			}
			if cpu1, ok := cputime.Process(); cpuOK && ok {
				b.ReportMetric((cpu1-cpu0).Seconds()*1e3/float64(b.N), "cpu-ms/step")
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/step")
		})
	}
}

// After its first run, the training step allocates nothing, on one thread
// and on two.
func TestStepDoesNotAllocate(t *testing.T) {
	for _, n := range []int{1, 2} {
		s, feeds := newBenchStep(t, vm.WithThreads(n))
		if allocs := testing.AllocsPerRun(2, func() {
			if err := s.runner.Run(feeds); err != nil {
				t.Fatal(err)
			}
		}); allocs != 0 {
			t.Errorf("threads=%d: a training step allocates %v times, want 0", n, allocs)
		}
		s.runner.Machine().Close()
	}
}

// newBenchStep builds BenchmarkStep's training step on a machine with
// opts and its feeds (random characters), run once.
func newBenchStep(tb testing.TB, opts ...vm.Option) (*trainingStep, vm.Feeds) {
	tb.Helper()
	cfg := DefaultConfig()
	rng := rand.New(rand.NewPCG(cfg.Seed, 0))
	s, err := newTrainingStep(cfg, benchVocab, rng, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	text := make([]int64, 10_000)
	for i := range text {
		text[i] = int64(rng.IntN(benchVocab))
	}
	w, err := newWindows(text, cfg.Batch, cfg.Context)
	if err != nil {
		tb.Fatal(err)
	}
	w.random(rng)
	feeds := vm.Feeds{s.x: w.x, s.y: w.y}
	if err := s.runner.Run(feeds); err != nil {
		tb.Fatal(err)
	}
	return s, feeds
}
