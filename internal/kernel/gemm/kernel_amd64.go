//go:build !purego

package gemm

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd _asm && go run . -out ../kernel_amd64.s -stubs ../kernel_amd64_stubs.go -pkg gemm"

// avx2Kernels use 256-bit FMA: a 6×8 float64 tile and a 6×16 float32 tile,
// twelve accumulator registers each.
var avx2Kernels = kernels{
	name: "avx2",
	f32:  kernel[float32]{micro: microF32AVX2, microStrided: microStridedF32AVX2, microDirect: microDirectF32AVX2, microDirectT: microDirectTF32AVX2, dot: dotF32AVX2, axpy: axpyF32AVX2, dots4: dots4F32AVX2, axpy4: axpy4F32AVX2, dotTile: dotTileF32AVX2, fewRows: fewRowsAVX2(fewRows2F32AVX2, fewRows3F32AVX2, fewRows4F32AVX2), lanes: 8, mr: 6, nr: 16, kc: 256, mc: 96, nc: 2048},
	f64:  kernel[float64]{micro: microF64AVX2, microStrided: microStridedF64AVX2, microDirect: microDirectF64AVX2, microDirectT: microDirectTF64AVX2, dot: dotF64AVX2, axpy: axpyF64AVX2, dots4: dots4F64AVX2, axpy4: axpy4F64AVX2, dotTile: dotTileF64AVX2, fewRows: fewRowsAVX2(fewRows2F64AVX2, fewRows3F64AVX2, fewRows4F64AVX2), lanes: 4, mr: 6, nr: 8, kc: 256, mc: 96, nc: 2048},
}

// avx512Kernels use 512-bit FMA for the micro-kernels, a 6×32 float64
// tile and a 6×64 float32 tile (24 accumulator registers of the 32), and
// for the tiles of dot products of products with B transposed. The
// kernels of matrix–vector products, which wait on memory more than on
// arithmetic, are AVX2's, and so are those of products of a few rows
// (fewRows), so lanes is AVX2's (dotTile takes its multiples).
var avx512Kernels = kernels{
	name: "avx512",
	f32:  kernel[float32]{micro: microF32AVX512, microStrided: microStridedF32AVX512, microDirect: microDirectF32AVX512, microDirectT: microDirectTF32AVX512, dot: dotF32AVX2, axpy: axpyF32AVX2, dots4: dots4F32AVX2, axpy4: axpy4F32AVX2, dotTile: dotTileF32AVX512, fewRows: fewRowsAVX2(fewRows2F32AVX2, fewRows3F32AVX2, fewRows4F32AVX2), lanes: 8, mr: 6, nr: 64, kc: 256, mc: 144, nc: 2048},
	f64:  kernel[float64]{micro: microF64AVX512, microStrided: microStridedF64AVX512, microDirect: microDirectF64AVX512, microDirectT: microDirectTF64AVX512, dot: dotF64AVX2, axpy: axpyF64AVX2, dots4: dots4F64AVX2, axpy4: axpy4F64AVX2, dotTile: dotTileF64AVX512, fewRows: fewRowsAVX2(fewRows2F64AVX2, fewRows3F64AVX2, fewRows4F64AVX2), lanes: 4, mr: 6, nr: 32, kc: 256, mc: 144, nc: 2048},
	// Products of at most 16 (float32) or 8 (float64) columns, such as
	// attention's per-head products, fill a quarter of these tiles:
	// narrower ones fit them and give the same bits (the same kc, FMAs in
	// the same order).
	narrow: &avx512NarrowKernels,
}

// avx512NarrowKernels are avx512Kernels' narrow tiles: for float32, 8×16
// in one zmm register a row (twice the FMAs an instruction of AVX2's
// 6×16, and 64 rows in whole tiles); for float64, AVX2's 6×8.
var avx512NarrowKernels = func() kernels {
	ks := avx2Kernels
	ks.name = "avx512narrow"
	ks.f32.micro, ks.f32.microStrided = microF32AVX512Narrow, microStridedF32AVX512Narrow
	ks.f32.microDirect, ks.f32.microDirectT = microDirectF32AVX512Narrow, microDirectTF32AVX512Narrow
	ks.f32.mr, ks.f32.mc = 8, 144
	return ks
}()

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		available = append([]*kernels{&avx2Kernels}, available...)
		if cpu.X86.HasAVX512F {
			available = append([]*kernels{&avx512Kernels}, available...)
		}
		active = available[0]
	}
}

// fewRowsAVX2 makes one fewRowsFunc of the assembly kernels for 2, 3 and 4
// rows.
func fewRowsAVX2[E elem](k2, k3, k4 func(n, k int, a0, a1, a2, a3, b *E, ldb int, c0, c1, c2, c3 *E, acc bool)) fewRowsFunc[E] {
	ks := [...]func(n, k int, a0, a1, a2, a3, b *E, ldb int, c0, c1, c2, c3 *E, acc bool){k2, k3, k4}
	return func(m, n, k int, a0, a1, a2, a3, b *E, ldb int, c0, c1, c2, c3 *E, acc bool) {
		ks[m-2](n, k, a0, a1, a2, a3, b, ldb, c0, c1, c2, c3, acc)
	}
}
