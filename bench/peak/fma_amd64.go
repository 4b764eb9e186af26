//go:build amd64 && !purego

package main

import "golang.org/x/sys/cpu"

// chains and the lane counts are those of the generated loops (_asm).
const (
	chains   = 12
	lanesF64 = 4
	lanesF32 = 8
)

// available returns the FMA probes this CPU can run (AVX2 and FMA), or why
// there are none.
func available() ([]probe, string) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return nil, "the CPU lacks AVX2 or FMA"
	}
	return []probe{
		{"f64", chains * lanesF64 * 2, func(n int) {
			var out [chains * lanesF64]float64
			fmaF64(n, 1, 1, &out[0])
		}},
		{"f32", chains * lanesF32 * 2, func(n int) {
			var out [chains * lanesF32]float32
			fmaF32(n, 1, 1, &out[0])
		}},
	}, ""
}
