// Command blas measures OpenBLAS's matrix product (cblas_sgemm and
// cblas_dgemm, C = A·B for square n×n row-major matrices) at the sizes
// BenchmarkGEMM measures nabla's, on 1 thread and on GOMAXPROCS threads,
// so that the two can be compared in one run:
//
//	OPENBLAS_CORETYPE=Haswell go run -tags openblas ./bench/blas
//
// It prints one line per round (five rounds of about 0.2 s each), in the
// form of the Go benchmarks' names:
//
//	GEMM f64 n=256 threads=1 GFLOP/s 41.2
//
// Without -tags openblas (which needs cgo and Debian's libopenblas-dev) it
// prints a line saying it was skipped, and exits 0.
package main

import (
	"fmt"
	"os"
	"runtime"
	"time"
)

// sizes are BenchmarkGEMM's.
var sizes = []int{64, 256, 1024}

const rounds = 5

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: blas (it takes no arguments)")
		os.Exit(2)
	}
	if why := unavailable(); why != "" {
		fmt.Println("skipped: OpenBLAS GEMM:", why)
		return
	}
	threads := []int{1}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		threads = append(threads, n)
	}
	for _, dtype := range []string{"f32", "f64"} {
		for _, n := range sizes {
			for _, t := range threads {
				setThreads(t)
				product := newProduct(dtype, n)
				for range rounds {
					fmt.Printf("GEMM %s n=%d threads=%d GFLOP/s %.4g\n", dtype, n, t, rate(product, n))
				}
			}
		}
	}
}

// rate times product over about 0.2 s after a warm-up call and returns its
// GFLOP/s (2n³ flops a call).
func rate(product func(), n int) float64 {
	product()
	calls, start := 0, time.Now()
	for calls == 0 || time.Since(start) < 200*time.Millisecond {
		product()
		calls++
	}
	return 2 * float64(n) * float64(n) * float64(n) * float64(calls) / time.Since(start).Seconds() / 1e9
}

// operand returns n×n values in [-1, 1).
func operand[T float32 | float64](n int, seed int) []T {
	v := make([]T, n*n)
	x := uint32(seed)
	for i := range v {
		x = x*1664525 + 1013904223
		v[i] = T(float64(x>>8)/float64(1<<23) - 1)
	}
	return v
}
