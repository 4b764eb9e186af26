//go:build !amd64 || purego

package vmath

// Without assembly there is no second implementation.
var avx2Kernels, avx512Kernels *kernelSet

// asmSets is empty: no assembly implementations.
var asmSets []*kernelSet

// useAsm and useAVX512 are false: the exported functions' assembly
// branches compile away.
const useAsm, useAVX512 = false, false

// use does nothing: there is no assembly to switch to.
func use(*kernelSet) {}

// unreachable marks the assembly kernels' stand-ins below, which exist
// for the exported functions to compile and are never called.
func unreachable() { panic("vmath: no assembly kernels in this build") }

func exp64AVX2(_, _ []float64)         { unreachable() }
func log64AVX2(_, _ []float64)         { unreachable() }
func tanh64AVX2(_, _ []float64)        { unreachable() }
func sigmoid64AVX2(_, _ []float64)     { unreachable() }
func softplus64AVX2(_, _ []float64)    { unreachable() }
func exp32AVX2(_, _ []float32)         { unreachable() }
func log32AVX2(_, _ []float32)         { unreachable() }
func tanh32AVX2(_, _ []float32)        { unreachable() }
func sigmoid32AVX2(_, _ []float32)     { unreachable() }
func softplus32AVX2(_, _ []float32)    { unreachable() }
func erf64AVX2(_, _ []float64)         { unreachable() }
func gelu64AVX2(_, _ []float64)        { unreachable() }
func erf32AVX2(_, _ []float32)         { unreachable() }
func gelu32AVX2(_, _ []float32)        { unreachable() }
func exp64AVX512(_, _ []float64)       { unreachable() }
func log64AVX512(_, _ []float64)       { unreachable() }
func tanh64AVX512(_, _ []float64)      { unreachable() }
func sigmoid64AVX512(_, _ []float64)   { unreachable() }
func softplus64AVX512(_, _ []float64)  { unreachable() }
func exp32AVX512(_, _ []float32)       { unreachable() }
func log32AVX512(_, _ []float32)       { unreachable() }
func tanh32AVX512(_, _ []float32)      { unreachable() }
func sigmoid32AVX512(_, _ []float32)   { unreachable() }
func softplus32AVX512(_, _ []float32)  { unreachable() }
func erf64AVX512(_, _ []float64)       { unreachable() }
func gelu64AVX512(_, _ []float64)      { unreachable() }
func erf32AVX512(_, _ []float32)       { unreachable() }
func gelu32AVX512(_, _ []float32)      { unreachable() }
func geluDeriv32AVX2(_, _ []float32)   { unreachable() }
func geluDeriv32AVX512(_, _ []float32) { unreachable() }
