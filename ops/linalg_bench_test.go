package ops_test

import (
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// The linear algebra benchmarks run compiled programs on one thread, the
// sizes of bench/torch/linalg.py, which times torch.linalg (and LAPACK
// through numpy and scipy) on the same inputs' sizes.

// BenchmarkCholesky1024 factorises one 1024×1024 float64 matrix (LAPACK's
// blocked dpotrf, its level-3 BLAS on nabla's matrix product).
func BenchmarkCholesky1024(b *testing.B) {
	benchLinalg(b, func(a, _ *graph.Node) *graph.Node { return ops.Cholesky(a) }, 1, 1024, 1)
}

// BenchmarkSolve1024 solves one 1024×1024 float64 system with one
// right-hand side (dgetrf, then substitution): LAPACK's dgesv.
func BenchmarkSolve1024(b *testing.B) {
	benchLinalg(b, ops.Solve, 1, 1024, 1)
}

// BenchmarkBatchedCholeskySolve8 factorises 10,000 8×8 matrices and
// solves one right-hand side with each factor.
func BenchmarkBatchedCholeskySolve8(b *testing.B) {
	benchLinalg(b, func(a, rhs *graph.Node) *graph.Node { return ops.CholeskySolve(ops.Cholesky(a), rhs) }, 10000, 8, 1)
}

// benchLinalg times build(A, B) on batch symmetric positive-definite n×n
// matrices A and n×k right-hand sides B (no batch axis when batch is 1).
func benchLinalg(b *testing.B, build func(a, rhs *graph.Node) *graph.Node, batch, n, k int) {
	r := rand.New(rand.NewPCG(7, 7))
	as, bs := make([]float64, 0, batch*n*n), make([]float64, batch*n*k)
	for range batch {
		as = append(as, randomSPD(r, n)...)
	}
	for i := range bs {
		bs[i] = 2*r.Float64() - 1
	}
	aShape, bShape := []int{n, n}, []int{n, k}
	if batch > 1 {
		aShape, bShape = append([]int{batch}, aShape...), append([]int{batch}, bShape...)
	}
	g := graph.New()
	a, rhs := g.Input("a", graph.Float64, aShape...), g.Input("b", graph.Float64, bShape...)
	prog, err := compile.Compile([]*graph.Node{build(a, rhs)})
	if err != nil {
		b.Fatal(err)
	}
	m, err := vm.New(prog, vm.WithThreads(1))
	if err != nil {
		b.Fatal(err)
	}
	av, err := graph.FromFloat64s(graph.Float64, as, aShape...)
	if err != nil {
		b.Fatal(err)
	}
	bv, err := graph.FromFloat64s(graph.Float64, bs, bShape...)
	if err != nil {
		b.Fatal(err)
	}
	feeds := vm.Feeds{a: av, rhs: bv}
	if err := m.Run(feeds); err != nil {
		b.Fatal(err)
	}
	// The process's CPU time per run is reported too: on a shared machine,
	// the time it ran whether or not other processes kept it waiting for a
	// core (one thread: the machine's kernels run on this goroutine).
	start, ok := processCPU()
	for b.Loop() {
		if err := m.Run(feeds); err != nil {
			b.Fatal(err)
		}
	}
	if end, ok2 := processCPU(); ok && ok2 {
		b.ReportMetric(float64((end-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// randomSPD is X·Xᵀ/n + I for a random n×n X: symmetric positive-definite
// with eigenvalues between 1 and about 5.
func randomSPD(r *rand.Rand, n int) []float64 {
	x := make([]float64, n*n)
	for i := range x {
		x[i] = 2*r.Float64() - 1
	}
	a := make([]float64, n*n)
	for i := range n {
		for j := 0; j <= i; j++ {
			s := 0.0
			for k := range n {
				s += x[i*n+k] * x[j*n+k]
			}
			a[i*n+j], a[j*n+i] = s/float64(n), s/float64(n)
		}
		a[i*n+i]++
	}
	return a
}
