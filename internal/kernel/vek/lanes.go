package vek

import (
	"math"
	"unsafe"
)

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

// Sum4 sets sums[k] to the sum of the first n elements of row k (r0 to
// r3), as Sum4Loop adds one row, bit for bit: on amd64 four rows at once
// (for float32), the additions of the four rows running side by side
// where a single row's would wait one on another.
func Sum4[T Float](sums *[4]T, r0, r1, r2, r3 []T, n int) {
	r0, r1, r2, r3 = r0[:n], r1[:n], r2[:n], r3[:n]
	if useAsm && is32[T]() && n > 0 {
		sum4Rows32AVX2((*[4]float32)(unsafe.Pointer(sums)), &as[float32](r0)[0], &as[float32](r1)[0],
			&as[float32](r2)[0], &as[float32](r3)[0], n)
		return
	}
	sums[0], sums[1], sums[2], sums[3] = Sum4Loop(r0), Sum4Loop(r1), Sum4Loop(r2), Sum4Loop(r3)
}

// Sum4Loop adds xs with four accumulators, element i to accumulator i%4
// for the whole blocks of 4 and the rest to the first, then returns
// (a0+a1)+(a2+a3): the CPU overlaps the four chains of additions.
func Sum4Loop[T Float](xs []T) T {
	var s0, s1, s2, s3 T
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		s0 += xs[i]
		s1 += xs[i+1]
		s2 += xs[i+2]
		s3 += xs[i+3]
	}
	for ; i < len(xs); i++ {
		s0 += xs[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Max returns the largest element of x, NaN if x holds one, -Inf if it is
// empty; where the largest is a zero, either sign (as max's running
// maxima may find either). On amd64 (float32) its whole blocks of 8 go
// through 8 lanes of VMAXPS, with the lanes' NaNs tracked on the side.
func Max[T Float](x []T) T {
	inf := T(math.Inf(-1))
	m0, m1, m2, m3 := inf, inf, inf, inf
	i := 0
	if useAsm && is32[T]() {
		i = len(x) &^ 7
		m, nan := peak32AVX2(as[float32](x[:i]))
		if nan {
			return T(math.NaN())
		}
		m0 = T(m)
	}
	for ; i+4 <= len(x); i += 4 {
		q := x[i : i+4 : i+4]
		m0, m1, m2, m3 = max(m0, q[0]), max(m1, q[1]), max(m2, q[2]), max(m3, q[3])
	}
	for ; i < len(x); i++ {
		m0 = max(m0, x[i])
	}
	return max(m0, m1, m2, m3)
}
