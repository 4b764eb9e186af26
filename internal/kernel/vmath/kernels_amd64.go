//go:build amd64 && !purego

package vmath

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd _asm && go run . -out ../vmath_amd64.s -stubs ../stubs_amd64.go -pkg vmath"

// useAsm is set when the exported functions use the assembly.
var useAsm bool

// setUseAsm sets useAsm, for tests.
func setUseAsm(b bool) { useAsm = b }

// asmKernels is the AVX2+FMA implementation (vmath_amd64.s), nil where
// the processor lacks either.
var asmKernels *kernelSet

func init() {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return
	}
	asmKernels = &kernelSet{
		name:       "avx2",
		exp64:      exp64AVX2,
		log64:      log64AVX2,
		tanh64:     tanh64AVX2,
		sigmoid64:  sigmoid64AVX2,
		softplus64: softplus64AVX2,
		exp32:      exp32AVX2,
		log32:      log32AVX2,
		tanh32:     tanh32AVX2,
		sigmoid32:  sigmoid32AVX2,
		softplus32: softplus32AVX2,
		erf64:      erf64AVX2,
		gelu64:     gelu64AVX2,
		erf32:      erf32AVX2,
		gelu32:     gelu32AVX2,
	}
	useAsm = true
}
