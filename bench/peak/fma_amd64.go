//go:build amd64 && !purego

package main

import "golang.org/x/sys/cpu"

// chains and the lane counts are those of the generated loops (_asm): a
// ymm register holds 4 float64 or 8 float32, a zmm register twice as many.
const (
	chains   = 12
	lanesF64 = 4
	lanesF32 = 8
)

// available returns the FMA probes this CPU can run: 256-bit (AVX2 and
// FMA), then 512-bit (AVX512F) where it has them, or why there are none.
func available() ([]probe, string) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return nil, "the CPU lacks AVX2 or FMA"
	}
	probes := []probe{
		{"f64", chains * lanesF64 * 2, func(n int) {
			var out [chains * lanesF64]float64
			fmaF64(n, 1, 1, &out[0])
		}},
		{"f32", chains * lanesF32 * 2, func(n int) {
			var out [chains * lanesF32]float32
			fmaF32(n, 1, 1, &out[0])
		}},
	}
	if cpu.X86.HasAVX512F {
		probes = append(probes,
			probe{"f64/avx512", chains * 2 * lanesF64 * 2, func(n int) {
				var out [chains * 2 * lanesF64]float64
				fmaF64AVX512(n, 1, 1, &out[0])
			}},
			probe{"f32/avx512", chains * 2 * lanesF32 * 2, func(n int) {
				var out [chains * 2 * lanesF32]float32
				fmaF32AVX512(n, 1, 1, &out[0])
			}})
	}
	return probes, ""
}
