package conv

import "fmt"

// Float is the element types the kernels compute in (types defined on
// float32 and float64 run the Go loops).
type Float interface{ ~float32 | ~float64 }

// MaxRows is the most rows one call of Taps computes.
const MaxRows = 6

// Offsets are the taps of a sum of Taps: offsets into its input, checked
// once for the many blocks of positions that a convolution sums them over.
type Offsets struct {
	off   []int
	reach int // the largest offset
}

// NewOffsets returns the taps of off, which it keeps (not a copy); it
// panics where off is empty or an offset negative.
func NewOffsets(off []int) Offsets {
	if len(off) == 0 {
		panic("conv.NewOffsets: no taps")
	}
	o := Offsets{off: off}
	for _, v := range off {
		if v < 0 {
			panic(fmt.Sprintf("conv.NewOffsets: negative offset %d", v))
		}
		o.reach = max(o.reach, v)
	}
	return o
}

// Taps sets y[r·ldy + s] = Σ_t w[t·rows + r]·x[s + off[t]] for r < rows
// and s < n: rows (at most MaxRows) outputs over n positions, each a sum
// over the taps of off, in order. It panics where the slices are too
// short for the sums.
func Taps[T Float](y []T, ldy int, x []T, off Offsets, w []T, rows, n int) {
	if n <= 0 || rows <= 0 {
		return
	}
	if rows > MaxRows || len(off.off) == 0 || len(w) < len(off.off)*rows || len(y) < (rows-1)*ldy+n || ldy < n || off.reach+n > len(x) {
		panic(fmt.Sprintf("conv.Taps: %d rows of %d positions (ldy %d) into %d elements, %d taps reaching %d into %d elements, %d weights",
			rows, n, ldy, len(y), len(off.off), off.reach, len(x), len(w)))
	}
	if useAsm && taps(y, ldy, x, off.off, w, rows, n) {
		return
	}
	tapsGo(y, ldy, x, off.off, w, rows, n)
}

// tapsGo is Taps in Go.
func tapsGo[T Float](y []T, ldy int, x []T, off []int, w []T, rows, n int) {
	for r := range rows {
		dst := y[r*ldy : r*ldy+n]
		clear(dst)
		for t, o := range off {
			wt := w[t*rows+r]
			for s, v := range x[o : o+n] {
				dst[s] += wt * v
			}
		}
	}
}

// CopyRows copies rows rows of width elements, lds apart in src and ldd
// apart in dst: dst[i·ldd + j] = src[i·lds + j]. It panics where a slice
// is too short.
func CopyRows[T Float](dst []T, ldd int, src []T, lds, rows, width int) {
	if rows <= 0 || width <= 0 {
		return
	}
	if len(dst) < (rows-1)*ldd+width || len(src) < (rows-1)*lds+width || ldd < width || lds < width {
		panic(fmt.Sprintf("conv.CopyRows: %d rows of %d from %d elements (%d apart) to %d (%d apart)",
			rows, width, len(src), lds, len(dst), ldd))
	}
	if useAsm && copyRows(dst, ldd, src, lds, rows, width) {
		return
	}
	for i := range rows {
		copy(dst[i*ldd:i*ldd+width], src[i*lds:i*lds+width])
	}
}
