//go:build amd64 && !purego

package main

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// The generated loops do the arithmetic they claim: n iterations of
// acc += a·b from zero leave n·a·b in every lane of every accumulator
// (exact here: a·b = 1/8 and n·a·b < 2¹⁰), n = 0 leaves zeros, and nothing
// past the accumulators is written.
func TestFMALoops(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		t.Skip("the CPU lacks AVX2 or FMA")
	}
	for _, n := range []int{0, 1, 7, 1000} {
		checkLoop(t, "fmaF64", fmaF64, chains*lanesF64, n)
		checkLoop(t, "fmaF32", fmaF32, chains*lanesF32, n)
		if cpu.X86.HasAVX512F {
			checkLoop(t, "fmaF64AVX512", fmaF64AVX512, chains*2*lanesF64, n)
			checkLoop(t, "fmaF32AVX512", fmaF32AVX512, chains*2*lanesF32, n)
		}
	}
}

func checkLoop[E float32 | float64](t *testing.T, name string, loop func(n int, a, b E, out *E), size, n int) {
	t.Helper()
	want := float64(n) * 0.125
	out := make([]E, size+1)
	for i := range out {
		out[i] = -1
	}
	loop(n, 0.5, 0.25, &out[0])
	for i, v := range out[:size] {
		if float64(v) != want {
			t.Errorf("%s(%d): out[%d] = %v, want %v", name, n, i, v, want)
		}
	}
	if out[size] != -1 {
		t.Errorf("%s(%d): out[%d], past the accumulators, = %v", name, n, size, out[size])
	}
}
