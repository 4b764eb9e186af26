//go:build !amd64 || purego

package conv

// useAsm is false: the exported functions' assembly branches compile
// away.
const useAsm = false

// Available reports whether the kernels run in assembly here: they do
// not in this build.
func Available() bool { return false }

// unreachable marks the stand-ins below, which exist for the exported
// functions to compile and are never called.
func unreachable() { panic("conv: no assembly kernels in this build") }

func taps[T Float]([]T, int, []T, []int, []T, int, int) bool { unreachable(); return false }
func copyRows[T Float]([]T, int, []T, int, int, int) bool    { unreachable(); return false }

func maxHalves[T Float]([]T, int, []T, int, int, int, int) bool { unreachable(); return false }
