//go:build !amd64 || purego

package ops

import "unsafe"

// useFusedAsm reports whether an assembly kernel runs fused steps: not on
// this platform.
var useFusedAsm = false

// fusedStepsAsm runs none of the steps: the Go kernel runs them all.
func fusedStepsAsm[T float](code []fusedCode, ptrs []unsafe.Pointer, n int) int { return 0 }
