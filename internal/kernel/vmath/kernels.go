package vmath

// kernelSet is one implementation of every function. Each sets dst[i] =
// f(src[i]) for each i of dst; src is at least as long as dst.
type kernelSet struct {
	name                                        string
	exp64, log64, tanh64, sigmoid64, softplus64 func(dst, src []float64)
	exp32, log32, tanh32, sigmoid32, softplus32 func(dst, src []float32)
	erf64, gelu64                               func(dst, src []float64)
	erf32, gelu32, geluDeriv32                  func(dst, src []float32)
}

// goKernels is the pure-Go implementation: the scalar kernels in a loop.
var goKernels = kernelSet{
	name:       "go",
	exp64:      func(dst, src []float64) { map64(dst, src, exp64) },
	log64:      func(dst, src []float64) { map64(dst, src, log64) },
	tanh64:     func(dst, src []float64) { map64(dst, src, tanh64) },
	sigmoid64:  func(dst, src []float64) { map64(dst, src, sigmoid64) },
	softplus64: func(dst, src []float64) { map64(dst, src, softplus64) },
	exp32:      func(dst, src []float32) { map32(dst, src, exp64) },
	log32:      func(dst, src []float32) { map32(dst, src, log64) },
	tanh32:     func(dst, src []float32) { map32(dst, src, tanh64) },
	sigmoid32:  func(dst, src []float32) { map32(dst, src, sigmoid64) },
	softplus32: func(dst, src []float32) { map32(dst, src, softplus64) },
	erf64:      func(dst, src []float64) { map64(dst, src, erf64) },
	gelu64:     func(dst, src []float64) { map64(dst, src, gelu64) },
	erf32:      func(dst, src []float32) { map32(dst, src, erf64) },
	gelu32:     func(dst, src []float32) { map32(dst, src, gelu64) },

	geluDeriv32: func(dst, src []float32) { map32(dst, src, geluDeriv64) },
}

// active returns the implementation the exported functions use: the
// assembly when useAsm is set (where the processor runs it, see
// kernels_amd64.go; tests switch with use to check the exported
// functions' other paths), its AVX-512 kernels when useAVX512 is, else
// goKernels.
func active() *kernelSet {
	if useAVX512 {
		return avx512Kernels
	}
	if useAsm {
		return avx2Kernels
	}
	return &goKernels
}

func map64(dst, src []float64, f func(float64) float64) {
	src = src[:len(dst)]
	for i, x := range src {
		dst[i] = f(x)
	}
}

// map32 computes in float64 and rounds each result once. It widens a
// block of elements before calling f on them in a loop of its own: widened
// in the same loop, each conversion (CVTSS2SD, which merges into its
// destination register) waits for the previous call's result in that
// register, and the calls, which otherwise overlap, run one after another
// (see widen in package ops).
func map32(dst, src []float32, f func(float64) float64) {
	src = src[:len(dst)]
	var buf [64]float64
	for start := 0; start < len(src); start += len(buf) {
		b := buf[:min(len(buf), len(src)-start)]
		for i := range b {
			b[i] = float64(src[start+i])
		}
		for i, x := range b {
			b[i] = f(x)
		}
		for i, y := range b {
			dst[start+i] = float32(y)
		}
	}
}
