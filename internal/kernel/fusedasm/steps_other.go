//go:build !amd64 || purego

package fusedasm

import "unsafe"

// Available reports whether this processor runs the kernel: not on this
// platform.
var Available = false

// Steps64 runs none of the steps here.
func Steps64(code []Record, ptrs []unsafe.Pointer, n int) int { return 0 }

// Steps32 runs none of the steps here.
func Steps32(code []Record, ptrs []unsafe.Pointer, n int) int { return 0 }
