package main

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// available either gives probes or says why not, and a probe measures a
// positive rate.
func TestAvailable(t *testing.T) {
	probes, why := available()
	if len(probes) == 0 {
		if why == "" {
			t.Fatal("no probes and no reason")
		}
		t.Log(why)
		return
	}
	for _, p := range probes {
		if g := gflops(p, 1, time.Millisecond); !(g > 0) {
			t.Errorf("%s: %v GFLOP/s, want a positive rate", p.name, g)
		}
	}
}

func BenchmarkPeakFMA64(b *testing.B)       { benchPeak(b, "f64") }
func BenchmarkPeakFMA32(b *testing.B)       { benchPeak(b, "f32") }
func BenchmarkPeakFMA64AVX512(b *testing.B) { benchPeak(b, "f64/avx512") }
func BenchmarkPeakFMA32AVX512(b *testing.B) { benchPeak(b, "f32/avx512") }

// benchPeak runs the named probe on one thread and on GOMAXPROCS threads
// and reports GFLOP/s in all and per thread.
func benchPeak(b *testing.B, name string) {
	probes, why := available()
	var p *probe
	for i := range probes {
		if probes[i].name == name {
			p = &probes[i]
		}
	}
	if p == nil {
		if why == "" {
			why = "the CPU lacks " + name
		}
		b.Skip(why)
	}
	const iters = 1 << 14
	report := func(b *testing.B, threads int) {
		flops := float64(b.N) * iters * float64(p.flopsPerIter)
		total := flops / b.Elapsed().Seconds() / 1e9
		b.ReportMetric(total, "GFLOP/s")
		b.ReportMetric(total/float64(threads), "GFLOP/s/thread")
	}
	b.Run("threads=1", func(b *testing.B) {
		for b.Loop() {
			p.run(iters)
		}
		report(b, 1)
	})
	if n := runtime.GOMAXPROCS(0); n > 1 {
		b.Run(fmt.Sprintf("threads=%d", n), func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					p.run(iters)
				}
			})
			report(b, n)
		})
	}
}
