package vek

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

// Fill sets every element of dst to c, its bits copied.
func Fill[T Float](dst []T, c T) {
	if useAsm {
		if is32[T]() {
			fill32AVX2(as[float32](dst), float32(c))
		} else {
			fill64AVX2(as[float64](dst), float64(c))
		}
		return
	}
	for i := range dst {
		dst[i] = c
	}
}
