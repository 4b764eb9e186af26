//go:build amd64 && !purego

package main

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// The generated loops do the arithmetic they claim: n iterations of
// acc += a·b from zero leave n·a·b in every lane of every accumulator
// (exact here: a·b = 1/8 and n·a·b < 2¹⁰), and n = 0 leaves zeros.
func TestFMALoops(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		t.Skip("the CPU lacks AVX2 or FMA")
	}
	for _, n := range []int{0, 1, 7, 1000} {
		want := float64(n) * 0.125
		var out64 [chains * lanesF64]float64
		for i := range out64 {
			out64[i] = -1
		}
		fmaF64(n, 0.5, 0.25, &out64[0])
		for i, v := range out64 {
			if v != want {
				t.Errorf("fmaF64(%d): out[%d] = %v, want %v", n, i, v, want)
			}
		}
		var out32 [chains * lanesF32]float32
		for i := range out32 {
			out32[i] = -1
		}
		fmaF32(n, 0.5, 0.25, &out32[0])
		for i, v := range out32 {
			if float64(v) != want {
				t.Errorf("fmaF32(%d): out[%d] = %v, want %v", n, i, v, want)
			}
		}
	}
}
