package vmath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/nabla-go/nabla/internal/testkit/cputime"
)

// exported pairs each exported function with its kernels.
var exported = []struct {
	name string
	f64  func(dst, src []float64)
	f32  func(dst, src []float32)
	fn   fn
}{
	{"Exp", Exp64, Exp32, fns[0]},
	{"Log", Log64, Log32, fns[1]},
	{"Tanh", Tanh64, Tanh32, fns[2]},
	{"Sigmoid", Sigmoid64, Sigmoid32, fns[3]},
	{"Softplus", Softplus64, Softplus32, fns[4]},
	{"Erf", Erf64, Erf32, fns[5]},
	{"GELU", GELU64, GELU32, fn{name: "GELU",
		k64: func(k *kernelSet) func(dst, src []float64) { return k.gelu64 },
		k32: func(k *kernelSet) func(dst, src []float32) { return k.gelu32 }}},
}

// testValues returns n values in [-30, 30] and some specials, positive
// for Log (which gets |x|).
func testValues(n int, positive bool) []float64 {
	rng := rand.New(rand.NewPCG(5, 6))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = 60*rng.Float64() - 30
		if i%7 == 3 {
			xs[i] = specials[i%len(specials)]
		}
		if positive {
			xs[i] = math.Abs(xs[i])
		}
	}
	return xs
}

// TestExported checks that the exported functions use the active
// implementation, on every length up to 19 (the vector body and each
// tail) and in place, and that each element's result does not depend on
// its position: it equals the function of a one-element slice.
func TestExported(t *testing.T) {
	defer use(active())
	for _, set := range kernelSets() {
		use(set)
		if active() != set {
			t.Fatalf("useAsm %v, useAVX512 %v: active implementation is %s, want %s", useAsm, useAVX512, active().name, set.name)
		}
		testExported(t)
	}
}

func testExported(t *testing.T) {
	for _, e := range exported {
		for n := range 20 {
			x64 := testValues(n, e.name == "Log")
			x32 := make([]float32, n)
			for i, v := range x64 {
				x32[i] = float32(v)
			}
			want64, want32 := make([]float64, n), make([]float32, n)
			e.fn.k64(active())(want64, x64)
			e.fn.k32(active())(want32, x32)
			got64, got32 := make([]float64, n), make([]float32, n)
			e.f64(got64, x64)
			e.f32(got32, x32)
			// In place, with src longer than dst.
			in64, in32 := append([]float64(nil), x64...), append([]float32(nil), x32...)
			in64, in32 = append(in64, 1), append(in32, 1)
			e.f64(in64[:n], in64)
			e.f32(in32[:n], in32)
			for i := range n {
				var one64 [1]float64
				var one32 [1]float32
				e.f64(one64[:], x64[i:])
				e.f32(one32[:], x32[i:])
				for _, g := range []float64{got64[i], in64[i], one64[0]} {
					if ulps64(g, want64[i]) != 0 {
						t.Fatalf("%s %s64 n=%d element %d (%v): got %v, want %v", active().name, e.name, n, i, x64[i], g, want64[i])
					}
				}
				for _, g := range []float32{got32[i], in32[i], one32[0]} {
					if ulps32(g, want32[i]) != 0 {
						t.Fatalf("%s %s32 n=%d element %d (%v): got %v, want %v", active().name, e.name, n, i, x32[i], g, want32[i])
					}
				}
			}
			if in64[n] != 1 || in32[n] != 1 {
				t.Fatalf("%s n=%d wrote past dst", e.name, n)
			}
		}
	}
}

// TestKernelsAgree checks the implementations against each other on the
// same inputs: each within 2 ulp (float64) or 1 ulp (float32) of the
// pure-Go one, with the same special values.
func TestKernelsAgree(t *testing.T) {
	sets := kernelSets()
	for _, f := range fns {
		x64 := testValues(4099, f.name == "Log")
		x32 := make([]float32, len(x64))
		for i, v := range x64 {
			x32[i] = float32(v)
		}
		base64, base32 := make([]float64, len(x64)), make([]float32, len(x64))
		f.k64(sets[0])(base64, x64)
		f.k32(sets[0])(base32, x32)
		for _, set := range sets[1:] {
			got64, got32 := make([]float64, len(x64)), make([]float32, len(x64))
			f.k64(set)(got64, x64)
			f.k32(set)(got32, x32)
			for i := range x64 {
				if ulps64(got64[i], base64[i]) > 2 || ulps32(got32[i], base32[i]) > 1 {
					t.Fatalf("%s %s(%v): %v and %v, pure Go %v and %v", set.name, f.name, x64[i], got64[i], got32[i], base64[i], base32[i])
				}
			}
		}
	}
}

// benchElems runs body, which computes n elements, as the sub-benchmark
// name, and reports ns per element of wall time and, where the system
// tells it, of the thread's CPU time (cpu-ns/elem), which on a loaded
// machine leaves out the time the thread waited for a core.
func benchElems(b *testing.B, name string, n int, body func()) {
	b.Run(name, func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cpu0, ok := cputime.Thread()
		for b.Loop() {
			body()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
		if cpu1, ok1 := cputime.Thread(); ok && ok1 {
			b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/elem")
		}
	})
}

// BenchmarkVmath reports ns per element on 4096 elements for each
// function, dtype and implementation, and for the math package's scalar
// function in a loop ("math") for comparison.
func BenchmarkVmath(b *testing.B) {
	const n = 4096
	for _, f := range fns {
		x64 := testValues(n, f.name == "Log")
		for i, v := range x64 {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				x64[i] = 0.5
			}
		}
		x32 := make([]float32, n)
		for i, v := range x64 {
			x32[i] = float32(v)
		}
		d64, d32 := make([]float64, n), make([]float32, n)
		run := func(name string, body func()) { benchElems(b, name, n, body) }
		run(fmt.Sprintf("%s/float64/math", f.name), func() { map64(d64, x64, f.ref) })
		run(fmt.Sprintf("%s/float32/math", f.name), func() { map32(d32, x32, f.ref) })
		for _, set := range kernelSets() {
			k64, k32 := f.k64(set), f.k32(set)
			run(fmt.Sprintf("%s/float64/%s", f.name, set.name), func() { k64(d64, x64) })
			run(fmt.Sprintf("%s/float32/%s", f.name, set.name), func() { k32(d32, x32) })
		}
	}
}

// BenchmarkErfGELU reports ns per element of Erf and GELU on 4096
// standard normal inputs, as a network's activations are, whose ranges
// mix (BenchmarkVmath's inputs, uniform on [-30, 30], are mostly in
// erf's last range), beside the math package's erf in a loop ("math").
func BenchmarkErfGELU(b *testing.B) {
	const n = 4096
	rng := rand.New(rand.NewPCG(7, 8))
	x64, x32 := make([]float64, n), make([]float32, n)
	for i := range x64 {
		x64[i] = rng.NormFloat64()
		x32[i] = float32(x64[i])
	}
	d64, d32 := make([]float64, n), make([]float32, n)
	run := func(name string, body func()) { benchElems(b, name, n, body) }
	for _, f := range []struct {
		name string
		ref  func(float64) float64
		k64  func(*kernelSet) func(dst, src []float64)
		k32  func(*kernelSet) func(dst, src []float32)
	}{
		{"Erf", math.Erf, fns[5].k64, fns[5].k32},
		{"GELU", refGELU, exported[6].fn.k64, exported[6].fn.k32},
	} {
		run(f.name+"/float64/math", func() { map64(d64, x64, f.ref) })
		run(f.name+"/float32/math", func() { map32(d32, x32, f.ref) })
		for _, set := range kernelSets() {
			k64, k32 := f.k64(set), f.k32(set)
			run(fmt.Sprintf("%s/float64/%s", f.name, set.name), func() { k64(d64, x64) })
			run(fmt.Sprintf("%s/float32/%s", f.name, set.name), func() { k32(d32, x32) })
		}
	}
}
