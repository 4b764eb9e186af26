//go:build !purego

package gemm

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd _asm && go run . -out ../kernel_amd64.s -stubs ../kernel_amd64_stubs.go -pkg gemm"

// avx2Kernels use 256-bit FMA: a 6×8 float64 tile and a 6×16 float32 tile,
// twelve accumulator registers each.
var avx2Kernels = kernels{
	name: "avx2",
	f32:  kernel[float32]{micro: microF32AVX2, microStrided: microStridedF32AVX2, dot: dotF32AVX2, axpy: axpyF32AVX2, dots4: dots4F32AVX2, axpy4: axpy4F32AVX2, dotTile: dotTileF32AVX2, lanes: 8, mr: 6, nr: 16, kc: 256, mc: 96, nc: 2048},
	f64:  kernel[float64]{micro: microF64AVX2, microStrided: microStridedF64AVX2, dot: dotF64AVX2, axpy: axpyF64AVX2, dots4: dots4F64AVX2, axpy4: axpy4F64AVX2, dotTile: dotTileF64AVX2, lanes: 4, mr: 6, nr: 8, kc: 256, mc: 96, nc: 2048},
}

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		available = append([]*kernels{&avx2Kernels}, available...)
		active = available[0]
	}
}
