//go:build !amd64 || purego

package vek

// useAsm is false: the exported functions' assembly branches compile
// away.
const useAsm = false

// setUseAsm reports whether useAsm is now b: there is no assembly to
// switch to.
func setUseAsm(b bool) bool { return !b }

// unreachable marks the dispatchers' stand-ins below, which exist for the
// exported functions to compile and are never called.
func unreachable() { panic("vek: no assembly kernels in this build") }

func vv32(Op, []float32, []float32, []float32) { unreachable() }
func vs32(Op, []float32, []float32, float32)   { unreachable() }
func sv32(Op, []float32, float32, []float32)   { unreachable() }
func unary32(UnaryOp, []float32, []float32)    { unreachable() }
func vv64(Op, []float64, []float64, []float64) { unreachable() }
func vs64(Op, []float64, []float64, float64)   { unreachable() }
func sv64(Op, []float64, float64, []float64)   { unreachable() }
func unary64(UnaryOp, []float64, []float64)    { unreachable() }

func where32([]float32, []float32, []float32, int, []float32, int) { unreachable() }
func where64([]float64, []float64, []float64, int, []float64, int) { unreachable() }
func fill32AVX2([]float32, float32)                                { unreachable() }
func fill64AVX2([]float64, float64)                                { unreachable() }

func adam32(AdamDecay, bool, []float32, []float32, []float32, []float32, []float32, []float32, []float32, []float32) {
	unreachable()
}

func adam64(AdamDecay, bool, []float64, []float64, []float64, []float64, []float64, []float64, []float64, []float64) {
	unreachable()
}
func sumLanes32AVX2(*[8]float32, []float32)                                   { unreachable() }
func sum4Rows32AVX2(*[4]float32, *float32, *float32, *float32, *float32, int) { unreachable() }
func peak32AVX2([]float32) (float32, bool)                                    { unreachable(); return 0, false }
func sumLanes64AVX2(*[8]float64, []float64)                                   { unreachable() }
func devLanes32AVX2(*[8]float32, []float32, []float32, float32, float32)      { unreachable() }
func devLanes64AVX2(*[8]float64, []float64, []float64, float64, float64)      { unreachable() }

// useAVX512 is false: there are no AVX-512 kernels in this build.
const useAVX512 = false

// setUseAVX512 reports whether the AVX-512 kernels are now in use (b):
// there are none in this build.
func setUseAVX512(b bool) bool { return !b }

func adamM32Wide(AdamDecay, bool, []float64, []float32, []float32, []float64, []float64, []float32, []float32, []float32, []float64) bool {
	return false
}
