// Command peak measures the machine's floating-point peak: the GFLOP/s of
// a loop of independent fused multiply-adds on 256-bit registers (AVX2 and
// FMA) and, where the CPU has AVX-512, on 512-bit registers, in float64
// and float32, on one thread and on every thread (GOMAXPROCS), so that
// other figures can be read as a share of it:
//
//	go run ./bench/peak
//
// prints one line per figure, the best of ten trials of about 0.1 s (on a
// shared machine the best is the one least disturbed):
//
//	peak f64 threads=1 GFLOP/s 63.9
//	peak f64/avx512 threads=1 GFLOP/s 105.2
//
// (the 512-bit probes are named f64/avx512 and f32/avx512) and, for more
// than one thread, the rate per thread
// ("peak f64 threads=2 GFLOP/s/thread 47.5").
//
// Built with -tags purego or for another architecture it has no probe,
// and says so. The loops are generated (see _asm); BenchmarkPeakFMA64,
// BenchmarkPeakFMA32 and their AVX512 variants measure the same under go
// test.
package main

//go:generate sh -c "cd _asm && go run . -out ../fma_amd64.s -stubs ../fma_amd64_stubs.go -pkg main"

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
)

// probe is one FMA loop: run does n iterations of flopsPerIter flops.
type probe struct {
	name         string // the dtype's short name, f64 or f32
	flopsPerIter int
	run          func(n int)
}

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: peak (it takes no arguments)")
		os.Exit(2)
	}
	probes, why := available()
	if len(probes) == 0 {
		fmt.Println("skipped: peak probe:", why)
		return
	}
	threads := []int{1}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		threads = append(threads, n)
	}
	for _, p := range probes {
		for _, t := range threads {
			best := 0.0
			for range 10 {
				best = max(best, gflops(p, t, 100*time.Millisecond))
			}
			fmt.Printf("peak %s threads=%d GFLOP/s %.4g\n", p.name, t, best)
			if t > 1 {
				fmt.Printf("peak %s threads=%d GFLOP/s/thread %.4g\n", p.name, t, best/float64(t))
			}
		}
	}
}

// gflops runs p on threads goroutines, each locked to its thread, for
// about d, and returns their total GFLOP/s.
func gflops(p probe, threads int, d time.Duration) float64 {
	// Size a call to about a millisecond, then each goroutine makes enough
	// calls to last d.
	iters := 1 << 12
	for {
		start := time.Now()
		p.run(iters)
		if time.Since(start) > time.Millisecond || iters > 1<<30 {
			break
		}
		iters *= 2
	}
	start := time.Now()
	p.run(iters)
	calls := max(1, int(d/max(time.Since(start), 1)))
	var wg sync.WaitGroup
	start = time.Now()
	for range threads {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for range calls {
				p.run(iters)
			}
		})
	}
	wg.Wait()
	flops := float64(threads) * float64(calls) * float64(iters) * float64(p.flopsPerIter)
	return flops / time.Since(start).Seconds() / 1e9
}
