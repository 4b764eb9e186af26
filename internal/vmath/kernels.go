package vmath

// kernelSet is one implementation of every function. Each sets dst[i] =
// f(src[i]) for each i of dst; src is at least as long as dst.
type kernelSet struct {
	name                                        string
	exp64, log64, tanh64, sigmoid64, softplus64 func(dst, src []float64)
	exp32, log32, tanh32, sigmoid32, softplus32 func(dst, src []float32)
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
}

// active returns the implementation the exported functions use: the
// assembly when useAsm is set (where the processor runs it, see
// kernels_amd64.go; tests clear it with setUseAsm to check the exported
// functions' pure-Go path), else goKernels.
func active() *kernelSet {
	if useAsm {
		return asmKernels
	}
	return &goKernels
}

func map64(dst, src []float64, f func(float64) float64) {
	src = src[:len(dst)]
	for i, x := range src {
		dst[i] = f(x)
	}
}

// map32 computes in float64 and rounds each result once.
func map32(dst, src []float32, f func(float64) float64) {
	src = src[:len(dst)]
	for i, x := range src {
		dst[i] = float32(f(float64(x)))
	}
}
