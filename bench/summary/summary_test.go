package main

import (
	"strings"
	"testing"
)

const goOutput = `goos: linux
BenchmarkW1/f32/sgd/threads=1-2   20  20436398 ns/op  20.00 ms/step  0 B/op  0 allocs/op
BenchmarkW1/f32/sgd/threads=1-2   20  20436398 ns/op  10.00 ms/step  0 B/op  0 allocs/op
BenchmarkW1/f32/sgd/threads=1-2   20  20436398 ns/op  12.00 ms/step  0 B/op  0 allocs/op
BenchmarkW1/f32/sgd/gorgonia-2    20  37546431 ns/op  36.00 ms/step  1892027 B/op  1315 allocs/op
BenchmarkGEMM/f64/n=64/threads=1-2  3  149280 ns/op  3.500 GFLOP/s  0 B/op  0 allocs/op
BenchmarkGEMM/f32/n=64/threads=1-2  3  149280 ns/op  60.00 GFLOP/s  0 B/op  0 allocs/op
BenchmarkCharLM/f32/threads=1-2  10  45000000 ns/op  40.00 cpu-ms/step  45.00 ms/step  0 B/op  0 allocs/op
PASS
`

const torchOutput = `W1 f32 sgd threads=1 ms/step 6
CharLM f32 threads=1 ms/step 90
CharLM f32 threads=1 cpu-ms/step 50
W3 f64 hessian-vectorized threads=1 us/op 2934.67
skipped: W3 something
`

const peakOutput = `peak f64 threads=1 GFLOP/s 35
peak f64 threads=1 GFLOP/s 20
peak f64 threads=1 GFLOP/s 10
peak f32 threads=1 GFLOP/s 40
peak f32/avx512 threads=1 GFLOP/s 80
`

const blasOutput = `GEMM f64 n=64 threads=1 GFLOP/s 7
GEMM f64 n=64 threads=1 GFLOP/s 9
`

func TestSummary(t *testing.T) {
	f := newFigures()
	for _, in := range []struct{ source, text string }{
		{"nabla", goOutput}, {"torch", torchOutput}, {"peak", peakOutput}, {"openblas", blasOutput},
	} {
		if err := f.read(in.source, strings.NewReader(in.text)); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	f.write(&out, "nabla")
	got := out.String()
	for _, want := range []string{
		"| figure | unit | nabla | gorgonia | torch | openblas |\n",
		// The median of 20, 10 and 12; Gorgonia's figure has no threads
		// word and counts for the row; nabla is 3× faster than Gorgonia
		// and 0.5× PyTorch's speed.
		"| W1 f32 sgd threads=1 | ms/step | 12 | 36 ×3.00 | 6 ×0.50 |  |\n",
		// The median of 7 and 9; rates as shares of the peak (the best
		// of its samples); nabla's speed over OpenBLAS's is 3.5/8.
		"| GEMM f64 n=64 threads=1 | GFLOP/s | 3.5 (10% of peak) |  |  | 8 (23% of peak) ×0.44 |\n",
		// Where the probe measured 512-bit vectors, shares are of
		// their peak (80, not the 256-bit 40).
		"| GEMM f32 n=64 threads=1 | GFLOP/s | 60 (75% of peak) |",
		// CPU time a step is a figure of its own beside the wall time.
		"| CharLM f32 threads=1 | cpu-ms/step | 40 |  | 50 ×1.25 |  |\n",
		"| CharLM f32 threads=1 | ms/step | 45 |  | 90 ×2.00 |  |\n",
		// A peer's figure nabla has no match for gets a row of its own.
		"| W3 f64 hessian-vectorized threads=1 | us/op |  |  | 2935 |  |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks\n%s\ngot\n%s", want, got)
		}
	}
	if strings.Contains(got, "| W1 f32 sgd | ms/step") {
		t.Errorf("Gorgonia's W1 figure, matched to nabla's row, has a row of its own:\n%s", got)
	}
	if len(f.notes) != 1 || f.notes[0] != "torch: skipped: W3 something" {
		t.Errorf("notes %q, want torch's skip line", f.notes)
	}
}
