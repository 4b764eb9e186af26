//go:build amd64 && !purego

package ops

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useFusedAsm is set where the processor runs the assembly kernel (AVX2).
var useFusedAsm = cpu.X86.HasAVX2

// fusedStepsAsm runs code's steps over a block of n elements, the
// locations' first elements in ptrs, up to the first it has no assembly
// for (an opcode past fcEqual), and returns how many it ran.
func fusedStepsAsm[T float](code []fusedCode, ptrs []unsafe.Pointer, n int) int {
	if !useFusedAsm {
		return 0
	}
	var z T
	if unsafe.Sizeof(z) == 4 {
		return fusedSteps32(code, ptrs, n)
	}
	return fusedSteps64(code, ptrs, n)
}

// fusedSteps64 is fusedStepsAsm for float64, 4 elements an instruction.
//
//go:noescape
func fusedSteps64(code []fusedCode, ptrs []unsafe.Pointer, n int) int

// fusedSteps32 is fusedStepsAsm for float32, 8 elements an instruction.
//
//go:noescape
func fusedSteps32(code []fusedCode, ptrs []unsafe.Pointer, n int) int
