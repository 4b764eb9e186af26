package gemm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/nabla-go/nabla/internal/kernel/parallel"
)

// BenchmarkMul times square products and the matrix–vector shapes, in
// GFLOP/s, on one thread and on all of them, with each kernel set this CPU
// runs (the default first; its name is the first part of the benchmark's):
//
//	go test -run '^$' -bench Mul ./internal/kernel/gemm/
//	go test -run '^$' -bench 'Mul/avx2/' ./internal/kernel/gemm/
func BenchmarkMul(b *testing.B) {
	forEachKernelB(b, func(b *testing.B) {
		for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
			for _, s := range benchShapes {
				b.Run(fmt.Sprintf("f64/%dx%dx%d/threads=%d", s[0], s[1], s[2], threads), func(b *testing.B) {
					benchMul[float64](b, s, threads)
				})
				b.Run(fmt.Sprintf("f32/%dx%dx%d/threads=%d", s[0], s[1], s[2], threads), func(b *testing.B) {
					benchMul[float32](b, s, threads)
				})
			}
		}
	})
}

// forEachKernelB runs f as a sub-benchmark per kernel set, named after it,
// with that set in use.
func forEachKernelB(b *testing.B, f func(b *testing.B)) {
	for _, name := range Kernels() {
		b.Run(name, func(b *testing.B) {
			prev, err := Use(name)
			if err != nil {
				b.Fatal(err)
			}
			defer Use(prev)
			f(b)
		})
	}
}

func benchMul[E elem](b *testing.B, s [3]int, threads int) {
	pr := newProblem[E](rand.New(rand.NewPCG(1, 1)), s[0], s[1], s[2], false, false, false, false)
	pool := parallel.New(threads)
	defer pool.Close()
	e := parallel.NewExec(pool)
	Mul(e, pr.p, pr.a, pr.b, pr.c)
	b.ResetTimer()
	for range b.N {
		Mul(e, pr.p, pr.a, pr.b, pr.c)
	}
	reportFlops(b, s)
}

// benchShapes are m×n×k: squares, the two matrix–vector shapes, and the
// first layer of an MLP on a batch of 64 MNIST images.
var benchShapes = [][3]int{{64, 64, 64}, {256, 256, 256}, {1024, 1024, 1024}, {1, 1024, 1024}, {1024, 1, 1024}, {64, 256, 784}}

func reportFlops(b *testing.B, s [3]int) {
	b.ReportMetric(2*float64(s[0]*s[1]*s[2])*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkMicro times each kernel set's micro-kernels alone on panels
// that stay in L1, the ceiling of what the driver can reach.
func BenchmarkMicro(b *testing.B) {
	forEachKernelB(b, func(b *testing.B) {
		b.Run("f64", func(b *testing.B) { benchMicro(b, kernelFor[float64]()) })
		b.Run("f32", func(b *testing.B) { benchMicro(b, kernelFor[float32]()) })
	})
}

func benchMicro[E elem](b *testing.B, k *kernel[E]) {
	const depth = 256
	a, p, c := make([]E, k.mr*depth), make([]E, k.nr*depth), make([]E, k.mr*k.nr)
	for range b.N {
		k.micro(depth, &a[0], &p[0], &c[0], k.nr, true)
	}
	b.ReportMetric(2*float64(k.mr*k.nr*depth)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
