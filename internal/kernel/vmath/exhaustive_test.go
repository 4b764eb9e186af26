package vmath

import (
	"math"
	"os"
	"runtime"
	"sync"
	"testing"
)

// TestExhaustive32 checks every float32 input of each float32 kernel of
// each implementation (within 1 ulp, as TestAccuracy32). It takes minutes,
// so it runs only with VMATH_EXHAUSTIVE set (to a function name, or "all").
func TestExhaustive32(t *testing.T) {
	which := os.Getenv("VMATH_EXHAUSTIVE")
	if which == "" {
		t.Skip("set VMATH_EXHAUSTIVE to a function name or all")
	}
	for _, set := range kernelSets() {
		for _, f := range fns {
			if which != "all" && which != f.name {
				continue
			}
			worst := exhaustive32(f.k32(set), f.ref)
			t.Logf("%s %s32: max %v ulp over all float32", set.name, f.name, worst)
			if worst > 1 {
				t.Errorf("%s %s32: %v ulp", set.name, f.name, worst)
			}
		}
	}
}

// exhaustive32 returns the largest ulp distance of k from float32(ref) over
// every float32, in blocks spread over GOMAXPROCS goroutines.
func exhaustive32(k func(dst, src []float32), ref func(float64) float64) float64 {
	const block = 1 << 16
	workers := runtime.GOMAXPROCS(0)
	results := make([]float64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in, out := make([]float32, block), make([]float32, block)
			worst := 0.0
			for start := uint64(w) * block; start < 1<<32; start += uint64(workers) * block {
				for i := range in {
					in[i] = math.Float32frombits(uint32(start) + uint32(i))
				}
				k(out, in)
				for i, x := range in {
					worst = max(worst, ulps32(out[i], float32(ref(float64(x)))))
				}
			}
			results[w] = worst
		}()
	}
	wg.Wait()
	worst := 0.0
	for _, r := range results {
		worst = max(worst, r)
	}
	return worst
}
