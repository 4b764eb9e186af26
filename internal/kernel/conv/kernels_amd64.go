//go:build amd64 && !purego

package conv

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd _asm && go run . -out ../conv_amd64.s -stubs ../stubs_amd64.go -pkg conv"

// useAsm is set where the processor has AVX-512.
var useAsm = cpu.X86.HasAVX512F

// Available reports whether the kernels run in assembly here.
func Available() bool { return useAsm }

// tapsKernel is one assembly kernel of Taps: a block of positions of a
// fixed number of rows (see _asm).
type tapsKernel[E Float] func(n int, x *E, off *int, w *E, y *E, ldy int, mask uint64)

var (
	taps32 = [MaxRows]tapsKernel[float32]{tapsF32R1, tapsF32R2, tapsF32R3, tapsF32R4, tapsF32R5, tapsF32R6}
	taps64 = [MaxRows]tapsKernel[float64]{tapsF64R1, tapsF64R2, tapsF64R3, tapsF64R4, tapsF64R5, tapsF64R6}
)

// lanes32 and lanes64 are the elements of a zmm register; a kernel's
// block is four registers.
const lanes32, lanes64 = 16, 8

// taps runs Taps, checked, on the assembly kernels; it reports false,
// computing nothing, for a type defined on float32 or float64.
func taps[T Float](y []T, ldy int, x []T, off []int, w []T, rows, n int) bool {
	switch y := any(y).(type) {
	case []float32:
		tapsBlocks(taps32[rows-1], lanes32, y, ldy, any(x).([]float32), off, any(w).([]float32), n)
	case []float64:
		tapsBlocks(taps64[rows-1], lanes64, y, ldy, any(x).([]float64), off, any(w).([]float64), n)
	default:
		return false
	}
	return true
}

// tapsBlocks calls k on each block of four vectors of lanes positions,
// the last one's lanes past n masked off.
func tapsBlocks[E Float](k tapsKernel[E], lanes int, y []E, ldy int, x []E, off []int, w []E, n int) {
	blk := 4 * lanes
	for s := 0; s < n; s += blk {
		mask := ^uint64(0)
		if rem := n - s; rem < blk {
			mask = 1<<rem - 1
		}
		k(len(off), &x[s], &off[0], &w[0], &y[s], ldy, mask)
	}
}

// copyRows runs CopyRows, checked, on the assembly kernels; it reports
// false, copying nothing, for a type defined on float32 or float64.
func copyRows[T Float](dst []T, ldd int, src []T, lds, rows, width int) bool {
	switch dst := any(dst).(type) {
	case []float32:
		full := (width - 1) / lanes32
		copyRowsF32(&dst[0], ldd, &any(src).([]float32)[0], lds, rows, full, 1<<(width-full*lanes32)-1)
	case []float64:
		full := (width - 1) / lanes64
		copyRowsF64(&dst[0], ldd, &any(src).([]float64)[0], lds, rows, full, 1<<(width-full*lanes64)-1)
	default:
		return false
	}
	return true
}

// maxHalves runs MaxHalves, checked, on the assembly kernels; it reports
// false, computing nothing, for a type defined on float32 or float64.
func maxHalves[T Float](dst []T, ldd int, src []T, lds, w, rows, ow int) bool {
	switch dst := any(dst).(type) {
	case []float32:
		full := (ow - 1) / lanes32
		rem := ow - full*lanes32
		return !maxHalvesF32(&dst[0], ldd, &any(src).([]float32)[0], lds, w, rows, full, 1<<(2*rem)-1, 1<<rem-1)
	case []float64:
		full := (ow - 1) / lanes64
		rem := ow - full*lanes64
		return !maxHalvesF64(&dst[0], ldd, &any(src).([]float64)[0], lds, w, rows, full, 1<<(2*rem)-1, 1<<rem-1)
	}
	return false
}
