package vek

import "unsafe"

// SumLanes adds x[i] to acc[i%8] for each i of x's whole blocks of 8, in
// order, and returns the rest of x, its last len(x)%8 elements. Each lane
// is a sum in order, so the lanes are those of a scalar loop with 8
// accumulators, bit for bit, whatever the processor.
func SumLanes[T Float](acc *[8]T, x []T) []T {
	whole := len(x) &^ 7
	if useAsm {
		if is32[T]() {
			sumLanes32AVX2(asLanes[float32](acc), as[float32](x[:whole]))
		} else {
			sumLanes64AVX2(asLanes[float64](acc), as[float64](x[:whole]))
		}
		return x[whole:]
	}
	for i := 0; i < whole; i += 8 {
		b := x[i : i+8 : i+8]
		for k := range acc {
			acc[k] += b[k]
		}
	}
	return x[whole:]
}

// DevLanes adds (x[i] - mx)·(y[i] - my) to acc[i%8] for each i of x's
// whole blocks of 8, in order, rounding after each operation, and returns
// the rest of x, its last len(x)%8 elements. y holds at least x's
// elements.
func DevLanes[T Float](acc *[8]T, x, y []T, mx, my T) []T {
	whole := len(x) &^ 7
	y = y[:whole]
	if useAsm {
		if is32[T]() {
			devLanes32AVX2(asLanes[float32](acc), as[float32](x[:whole]), as[float32](y), float32(mx), float32(my))
		} else {
			devLanes64AVX2(asLanes[float64](acc), as[float64](x[:whole]), as[float64](y), float64(mx), float64(my))
		}
		return x[whole:]
	}
	for i := 0; i < whole; i += 8 {
		a, b := x[i:i+8:i+8], y[i:i+8:i+8]
		for k := range acc {
			acc[k] += (a[k] - mx) * (b[k] - my)
		}
	}
	return x[whole:]
}

// asLanes views acc as lanes of U, of T's size.
func asLanes[U, T Float](acc *[8]T) *[8]U {
	return (*[8]U)(unsafe.Pointer(acc))
}
