package ops

import (
	"unsafe"

	"github.com/nabla-go/nabla/internal/kernel/fusedasm"
)

// useFusedAsm is set where the processor runs the assembly kernel
// (internal/kernel/fusedasm: AVX2).
var useFusedAsm = fusedasm.Available

// fusedStepsAsm runs code's steps over a block of n elements, the
// locations' first elements in ptrs, up to the first it has no assembly
// for (an opcode past fcEqual), and returns how many it ran.
func fusedStepsAsm[T float](code []fusedCode, ptrs []unsafe.Pointer, n int) int {
	if !useFusedAsm || len(code) == 0 {
		return 0
	}
	records := unsafe.Slice((*fusedasm.Record)(unsafe.Pointer(&code[0])), len(code))
	var z T
	if unsafe.Sizeof(z) == 4 {
		return fusedasm.Steps32(records, ptrs, n)
	}
	return fusedasm.Steps64(records, ptrs, n)
}
