//go:build openblas

package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/internal/testkit/blaspeer"
)

// BenchmarkOpenBLAS times OpenBLAS on BenchmarkMul's shapes, as the peer:
// gemv for one row or one column, gemm otherwise
// (threads as OPENBLAS_NUM_THREADS says; OPENBLAS_CORETYPE picks its
// kernels):
//
//	OPENBLAS_NUM_THREADS=1 go test -tags openblas -run '^$' -bench 'Mul|OpenBLAS' ./internal/kernel/gemm/
func BenchmarkOpenBLAS(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(fmt.Sprintf("f64/%dx%dx%d", s[0], s[1], s[2]), func(b *testing.B) { benchOpenBLAS[float64](b, s) })
		b.Run(fmt.Sprintf("f32/%dx%dx%d", s[0], s[1], s[2]), func(b *testing.B) { benchOpenBLAS[float32](b, s) })
	}
}

func benchOpenBLAS[E elem](b *testing.B, s [3]int) {
	pr := newProblem[E](rand.New(rand.NewPCG(1, 1)), s[0], s[1], s[2], false, false, false, false)
	m, n, k := s[0], s[1], s[2]
	for range b.N {
		switch {
		case m == 1: // c = bᵀ·a: OpenBLAS's gemv, as Mul does
			blaspeer.Gemv(true, k, n, pr.b, pr.a, pr.c)
		case n == 1:
			blaspeer.Gemv(false, m, k, pr.a, pr.b, pr.c)
		default:
			blaspeer.Gemm(m, n, k, pr.a, pr.b, pr.c)
		}
	}
	reportFlops(b, s)
}

func init() {
	peer = func(p Product, a, b, c any) {
		if a, ok := a.([]float32); ok {
			blaspeer.GemmT(p.TransA, p.TransB, p.Acc, p.M, p.N, p.K, a, p.Lda, b.([]float32), p.Ldb, c.([]float32), p.Ldc)
			return
		}
		blaspeer.GemmT(p.TransA, p.TransB, p.Acc, p.M, p.N, p.K, a.([]float64), p.Lda, b.([]float64), p.Ldb, c.([]float64), p.Ldc)
	}
}

// The peer computes what Mul computes, with and without transposes.
func TestOpenBLASAgrees(t *testing.T) {
	pr := newProblem[float64](rand.New(rand.NewPCG(1, 1)), 30, 40, 50, false, false, false, false)
	blaspeer.Gemm(30, 40, 50, pr.a, pr.b, pr.c)
	pr.check(t, pr.c)
	for flags := range 8 {
		pr := newProblem[float32](rand.New(rand.NewPCG(2, 2)), 30, 40, 50, flags&1 != 0, flags&2 != 0, flags&4 != 0, true)
		c := append([]float32(nil), pr.c...)
		peer(pr.p, pr.a, pr.b, c)
		pr.check(t, c)
	}
}
