package gemm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/nabla-go/nabla/internal/kernel/parallel"
	"github.com/nabla-go/nabla/internal/testkit/cputime"
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

// w1Products are the matrix products of W1's training step (a
// 784-256-256-10 perceptron on a batch of 64, bench/w1_test.go) as the
// machine runs them: the layers' x·Wᵀ, the gradients of their inputs
// dY·W and of their weights dYᵀ·X (depth 64, the batch).
var w1Products = []struct {
	name           string
	m, n, k        int
	transA, transB bool
}{
	{"fc1", 64, 256, 784, false, true},
	{"fc2", 64, 256, 256, false, true},
	{"fc3", 64, 10, 256, false, true},
	{"dW3", 10, 256, 64, true, false},
	{"dH2", 64, 256, 10, false, false},
	{"dW2", 256, 256, 64, true, false},
	{"dH1", 64, 256, 256, false, false},
	{"dW1", 256, 784, 64, true, false},
}

// charlmProducts are the matrix products of examples/charlm's training
// step on their own (width 64, feed-forward 256, 32 windows of 64, so
// 2048 rows): the layers' x·Wᵀ, the gradients dY·W and dYᵀ·X, and one
// head's attention products (128 of each a step, per block).
var charlmProducts = []struct {
	name           string
	m, n, k        int
	transA, transB bool
}{
	{"proj", 2048, 64, 64, false, true},
	{"linear1", 2048, 256, 64, false, true},
	{"linear2", 2048, 64, 256, false, true},
	{"head", 2048, 62, 64, false, true},
	{"dX64", 2048, 64, 64, false, false},
	{"dX1", 2048, 64, 256, false, false},
	{"dX2", 2048, 256, 64, false, false},
	{"dW64", 64, 64, 2048, true, false},
	{"dW1", 256, 64, 2048, true, false},
	{"dW2", 64, 256, 2048, true, false},
	{"scores", 64, 64, 16, false, true},
	{"weighted", 64, 16, 64, false, false},
	{"dProbs", 64, 64, 16, false, true},
	{"dV", 64, 16, 64, true, false},
	{"dQ", 64, 16, 64, false, false},
}

// BenchmarkCharLMProducts times Mul on each of charlmProducts, as
// BenchmarkW1Products does W1's:
//
//	go test -run '^$' -bench 'CharLMProducts/f32///nabla/threads=1' ./internal/kernel/gemm/
func BenchmarkCharLMProducts(b *testing.B) {
	for _, w := range charlmProducts {
		s := [3]int{w.m, w.n, w.k}
		name := fmt.Sprintf("%s/%dx%dx%d", w.name, w.m, w.n, w.k)
		b.Run("f32/"+name, func(b *testing.B) { benchW1Product[float32](b, s, w.transA, w.transB) })
	}
}

// peer, set in the openblas build (openblas_test.go), computes a product
// with OpenBLAS's gemm: BenchmarkW1Products times it beside Mul.
var peer func(p Product, a, b, c any)

// BenchmarkW1Products times Mul on each of W1's products, with the
// default kernel set, on one thread and on all of them, and OpenBLAS's
// gemm beside it in the openblas build (its threads as
// OPENBLAS_NUM_THREADS says):
//
//	OPENBLAS_NUM_THREADS=1 go test -tags openblas -run '^$' -bench W1Products ./internal/kernel/gemm/
func BenchmarkW1Products(b *testing.B) {
	for _, w := range w1Products {
		s := [3]int{w.m, w.n, w.k}
		name := fmt.Sprintf("%s/%dx%dx%d", w.name, w.m, w.n, w.k)
		b.Run("f32/"+name, func(b *testing.B) { benchW1Product[float32](b, s, w.transA, w.transB) })
		b.Run("f64/"+name, func(b *testing.B) { benchW1Product[float64](b, s, w.transA, w.transB) })
	}
}

func benchW1Product[E elem](b *testing.B, s [3]int, transA, transB bool) {
	pr := newProblem[E](rand.New(rand.NewPCG(1, 1)), s[0], s[1], s[2], transA, transB, false, false)
	for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("nabla/threads=%d", threads), func(b *testing.B) {
			pool := parallel.New(threads)
			defer pool.Close()
			e := parallel.NewExec(pool)
			timeThread(b, threads == 1, func() { Mul(e, pr.p, pr.a, pr.b, pr.c) })
			reportFlops(b, s)
		})
	}
	if peer != nil {
		b.Run("openblas", func(b *testing.B) {
			timeThread(b, true, func() { peer(pr.p, pr.a, pr.b, pr.c) })
			reportFlops(b, s)
		})
	}
}

// timeThread runs f b.N times after one warm-up call. With cpu, on a
// locked OS thread, it also reports the thread's CPU time per call
// (cpu-ns/op), which a busy machine's other work inflates less than the
// wall time: only for work that runs on the calling thread alone.
func timeThread(b *testing.B, cpu bool, f func()) {
	if cpu {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	f()
	b.ResetTimer()
	t0, ok := cputime.Thread()
	for range b.N {
		f()
	}
	if t1, ok1 := cputime.Thread(); cpu && ok && ok1 {
		b.ReportMetric(float64(t1-t0)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkAttentionBatch times a batch of 128 of attention's products of
// charlmProducts (a block's heads over 32 windows) as 128 calls of Mul
// and as one of MulBatch, on one thread:
//
//	go test -run '^$' -bench AttentionBatch ./internal/kernel/gemm/
func BenchmarkAttentionBatch(b *testing.B) {
	const batch = 128
	for _, w := range charlmProducts[10:] {
		pr := newProblem[float32](rand.New(rand.NewPCG(1, 1)), w.m, w.n, w.k, w.transA, w.transB, false, false)
		la, lb, lc := len(pr.a), len(pr.b), len(pr.c)
		a, bb, c := make([]float32, batch*la), make([]float32, batch*lb), make([]float32, batch*lc)
		for i := range batch {
			copy(a[i*la:], pr.a)
			copy(bb[i*lb:], pr.b)
		}
		pool := parallel.New(1)
		e := parallel.NewExec(pool)
		name := fmt.Sprintf("%s/%dx%dx%d", w.name, w.m, w.n, w.k)
		b.Run(name+"/mul", func(b *testing.B) {
			timeThread(b, true, func() {
				for i := range batch {
					Mul(e, pr.p, a[i*la:(i+1)*la], bb[i*lb:(i+1)*lb], c[i*lc:(i+1)*lc])
				}
			})
		})
		b.Run(name+"/batch", func(b *testing.B) {
			timeThread(b, true, func() { MulBatch(e, pr.p, batch, la, lb, lc, a, bb, c) })
		})
		pool.Close()
	}
}
