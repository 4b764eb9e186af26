//go:build amd64 && !purego

package vmath

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd _asm && go run . -out ../vmath_amd64.s -stubs ../stubs_amd64.go -pkg vmath"

// useAsm is set when the exported functions use the assembly, and
// useAVX512 when they use its AVX-512 kernels rather than the AVX2 ones.
var useAsm, useAVX512 bool

// avx2Kernels is the AVX2+FMA implementation (vmath_amd64.s), nil where
// the processor lacks either; avx512Kernels runs the same arithmetic on
// 8 float64 lanes, or for Exp32, Erf32 and GELU32 16 float32 lanes (the
// same bits: TestAVX512SameBits), nil without AVX512F.
var avx2Kernels, avx512Kernels *kernelSet

// asmSets are the assembly implementations the processor runs, the one
// the exported functions use last.
var asmSets []*kernelSet

// use makes the exported functions use set (goKernels or one of
// asmSets), for tests.
func use(set *kernelSet) {
	useAsm = set != &goKernels
	useAVX512 = set == avx512Kernels
}

func init() {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return
	}
	avx2Kernels = &kernelSet{
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

		geluDeriv32: geluDeriv32AVX2,
	}
	asmSets = []*kernelSet{avx2Kernels}
	if cpu.X86.HasAVX512F {
		avx512Kernels = &kernelSet{
			name:       "avx512",
			exp64:      exp64AVX512,
			log64:      log64AVX512,
			tanh64:     tanh64AVX512,
			sigmoid64:  sigmoid64AVX512,
			softplus64: softplus64AVX512,
			exp32:      exp32AVX512,
			log32:      log32AVX512,
			tanh32:     tanh32AVX512,
			sigmoid32:  sigmoid32AVX512,
			softplus32: softplus32AVX512,
			erf64:      erf64AVX512,
			gelu64:     gelu64AVX512,
			erf32:      erf32AVX512,
			gelu32:     gelu32AVX512,

			geluDeriv32: geluDeriv32AVX512,
		}
		asmSets = append(asmSets, avx512Kernels)
	}
	use(asmSets[len(asmSets)-1])
}
