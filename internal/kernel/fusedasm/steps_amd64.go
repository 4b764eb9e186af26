//go:build amd64 && !purego

package fusedasm

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Available reports whether this processor runs the kernel (AVX2).
var Available = cpu.X86.HasAVX2

// Steps64 runs code's steps over a block of n float64 elements, the
// locations' first elements in ptrs, 4 elements an instruction, up to the
// first step it has no assembly for, and returns how many it ran.
//
//go:noescape
func Steps64(code []Record, ptrs []unsafe.Pointer, n int) int

// Steps32 is Steps64 for float32, 8 elements an instruction.
//
//go:noescape
func Steps32(code []Record, ptrs []unsafe.Pointer, n int) int
