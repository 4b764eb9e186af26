package vek

import "unsafe"

// Where sets dst[i] = x[i·sx] where keep[i] != 0 (NaN included), else
// y[i·sy], for each i of dst; the strides sx and sy are 0 (a scalar,
// x[0]) or 1, and the slices of stride 1 must be at least as long as dst.
// dst may be one of them but must not overlap them otherwise. The value
// chosen is copied bit for bit, as the Go loop's assignment copies it.
func Where[T Float](dst, keep, x []T, sx int, y []T, sy int) {
	keep = keep[:len(dst)]
	if len(dst) == 0 {
		return
	}
	if useAsm {
		if is32[T]() {
			where32(as[float32](dst), as[float32](keep), as[float32](x), sx, as[float32](y), sy)
		} else {
			where64(as[float64](dst), as[float64](keep), as[float64](x), sx, as[float64](y), sy)
		}
		return
	}
	whereGo(dst, keep, x, sx, y, sy)
}

// whereGo is Where's Go loop.
func whereGo[T Float](dst, keep, x []T, sx int, y []T, sy int) {
	for i := range dst {
		if keep[i] != 0 {
			dst[i] = x[i*sx]
		} else {
			dst[i] = y[i*sy]
		}
	}
}

// Word is an element type of 4 or 8 bytes that Fill copies as bits.
type Word interface {
	~float32 | ~float64 | ~int32 | ~int64 | ~uint32 | ~uint64
}

// Fill sets every element of dst to c, its bits copied.
func Fill[T Word](dst []T, c T) {
	if useAsm {
		p := unsafe.Pointer(unsafe.SliceData(dst))
		if unsafe.Sizeof(c) == 4 {
			fill32AVX2(unsafe.Slice((*float32)(p), len(dst)), *(*float32)(unsafe.Pointer(&c)))
		} else {
			fill64AVX2(unsafe.Slice((*float64)(p), len(dst)), *(*float64)(unsafe.Pointer(&c)))
		}
		return
	}
	for i := range dst {
		dst[i] = c
	}
}
