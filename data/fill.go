package data

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"
)

// backingOf returns t's data as a typed slice, or an error for a dtype a
// data set does not hold.
func backingOf(t *tensor.Dense) (any, error) {
	switch t.Dtype() {
	case tensor.Float32:
		return t.Float32s(), nil
	case tensor.Float64:
		return t.Float64s(), nil
	case tensor.Int32:
		return t.Int32s(), nil
	case tensor.Int64:
		return t.Int64s(), nil
	case tensor.Uint8:
		return t.Uint8s(), nil
	}
	return nil, fmt.Errorf("dtype %v is not supported (float32, float64, int32, int64 or uint8)", t.Dtype())
}

// fill copies n elements of src from offset from into the tensor t,
// converting to t's dtype.
func fill(t *tensor.Dense, src any, from, n int) error {
	switch t.Dtype() {
	case tensor.Float32:
		return convert(t.Float32s(), src, from, n, true)
	case tensor.Float64:
		return convert(t.Float64s(), src, from, n, true)
	case tensor.Int32:
		return convert(t.Int32s(), src, from, n, false)
	case tensor.Int64:
		return convert(t.Int64s(), src, from, n, false)
	}
	return cannotFill(t.Dtype())
}

// cannotFill is the error for a tensor of a dtype fill does not write.
func cannotFill(dt tensor.Dtype) error {
	return fmt.Errorf("cannot fill a %v tensor (float32, float64, int32 or int64)", dt)
}

// number is an element type a batch is filled with.
type number interface {
	float32 | float64 | int32 | int64
}

// convert copies src[from:from+n] into dst[:n]. Into an integer dst
// (toFloat false) only integer sources go, and an int64 that does not fit
// an int32 is an error.
func convert[D number](dst []D, src any, from, n int, toFloat bool) error {
	dst = dst[:n]
	switch s := src.(type) {
	case []float32:
		if !toFloat {
			return fmt.Errorf("float32 values go into a float tensor, not %T", dst)
		}
		for i, v := range s[from : from+n] {
			dst[i] = D(v)
		}
	case []float64:
		if !toFloat {
			return fmt.Errorf("float64 values go into a float tensor, not %T", dst)
		}
		for i, v := range s[from : from+n] {
			dst[i] = D(v)
		}
	case []int32:
		for i, v := range s[from : from+n] {
			dst[i] = D(v)
		}
	case []int64:
		if _, narrow := any(dst).([]int32); narrow {
			for _, v := range s[from : from+n] {
				if v < math.MinInt32 || v > math.MaxInt32 {
					return fmt.Errorf("value %d does not fit an int32", v)
				}
			}
		}
		for i, v := range s[from : from+n] {
			dst[i] = D(v)
		}
	case []uint8:
		for i, v := range s[from : from+n] {
			dst[i] = D(v)
		}
	}
	return nil
}

// gather returns a new slice of the rows idx (of width elements) of src.
func gather(src any, width int, idx []int) any {
	switch s := src.(type) {
	case []float32:
		return gatherRows(s, width, idx)
	case []float64:
		return gatherRows(s, width, idx)
	case []int32:
		return gatherRows(s, width, idx)
	case []int64:
		return gatherRows(s, width, idx)
	case []uint8:
		return gatherRows(s, width, idx)
	}
	panic(fmt.Sprintf("data: unexpected backing %T", src)) // NewTensors admits no other
}

func gatherRows[T any](s []T, width int, idx []int) []T {
	out := make([]T, 0, len(idx)*width)
	for _, i := range idx {
		out = append(out, s[i*width:(i+1)*width]...)
	}
	return out
}

// shuffleRows shuffles the rows (of width elements) of src in place by
// r's Fisher–Yates swaps, allocating nothing. Generators of one seed make
// the same swaps, so every column shuffled with one is permuted alike, and
// row i ends up holding the old row Perm(rows)[i] of that seed.
func shuffleRows(src any, width, rows int, r *rand.Rand) {
	if width == 0 {
		return // empty rows: nothing moves
	}
	switch s := src.(type) {
	case []float32:
		swapRows(s, width, rows, r)
	case []float64:
		swapRows(s, width, rows, r)
	case []int32:
		swapRows(s, width, rows, r)
	case []int64:
		swapRows(s, width, rows, r)
	case []uint8:
		swapRows(s, width, rows, r)
	}
}

func swapRows[T any](s []T, width, rows int, r *rand.Rand) {
	r.Shuffle(rows, func(i, j int) {
		a, b := s[i*width:(i+1)*width], s[j*width:(j+1)*width]
		for k := range a {
			a[k], b[k] = b[k], a[k]
		}
	})
}
