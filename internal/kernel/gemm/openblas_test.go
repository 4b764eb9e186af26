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

// The peer computes what Mul computes.
func TestOpenBLASAgrees(t *testing.T) {
	pr := newProblem[float64](rand.New(rand.NewPCG(1, 1)), 30, 40, 50, false, false, false, false)
	blaspeer.Gemm(30, 40, 50, pr.a, pr.b, pr.c)
	pr.check(t, pr.c)
}
