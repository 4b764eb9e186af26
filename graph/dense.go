package graph

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"
)

// NewDense returns a zeroed, contiguous tensor of the given dtype (float32,
// float64, int32 or int64; anything else gives float64) and shape (no
// dimensions: a scalar). It works for zero-size shapes too.
func NewDense(dtype tensor.Dtype, shape ...int) *tensor.Dense {
	n := ShapeSize(shape)
	var backing any
	switch dtype {
	case Float32:
		backing = make([]float32, n)
	case Int32:
		backing = make([]int32, n)
	case Int64:
		backing = make([]int64, n)
	default:
		backing = make([]float64, n)
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(backing))
}

// NewDenseOf returns a zeroed tensor of type t.
func NewDenseOf(t Type) *tensor.Dense { return NewDense(t.DType, t.Shape...) }

// CloneDense returns a contiguous copy of t (materialising views), or an
// error if t's dtype is not float32, float64, int32 or int64.
func CloneDense(t *tensor.Dense) (*tensor.Dense, error) {
	if err := checkDType(t.Dtype()); err != nil {
		return nil, err
	}
	src := t
	if t.RequiresIterator() && ShapeSize(t.Shape()) > 0 { // every empty tensor claims to need one
		m, ok := t.Materialize().(*tensor.Dense)
		if !ok {
			return nil, fmt.Errorf("cannot materialise a %T", t.Materialize())
		}
		src = m
	}
	shape := []int(src.Shape())
	out := NewDense(src.Dtype(), shape...)
	if CopyValues(out, src) != ShapeSize(shape) {
		return nil, fmt.Errorf("tensor holds fewer elements than its shape %s", ShapeString(shape))
	}
	return out, nil
}

// FromFloat64s returns a tensor of the given dtype and shape holding vals
// (converted to float32 when dtype is Float32). It is a convenience for
// tests and examples; len(vals) must equal the shape's size. For an integer
// dtype every value must be an integer the dtype holds.
func FromFloat64s(dtype tensor.Dtype, vals []float64, shape ...int) (*tensor.Dense, error) {
	if err := checkValues(dtype, len(vals), shape); err != nil {
		return nil, err
	}
	for i, v := range vals {
		if IsInteger(dtype) && !fitsInteger(v, dtype) {
			return nil, fmt.Errorf("nabla: value %v at index %d is not an integer that %v holds", v, i, dtype)
		}
	}
	t := NewDense(dtype, shape...)
	for i, v := range vals {
		SetFloat(t, i, v)
	}
	return t, nil
}

// FromInt64s returns a tensor of the given dtype and shape holding vals:
// indices or labels for an integer dtype, converted for a float one. For
// Int32 every value must fit an int32. len(vals) must equal the shape's
// size.
func FromInt64s(dtype tensor.Dtype, vals []int64, shape ...int) (*tensor.Dense, error) {
	if err := checkValues(dtype, len(vals), shape); err != nil {
		return nil, err
	}
	t := NewDense(dtype, shape...)
	for i, v := range vals {
		switch dtype {
		case Int64:
			t.Int64s()[i] = v
		case Int32:
			if v != int64(int32(v)) {
				return nil, fmt.Errorf("nabla: value %d at index %d does not fit int32", v, i)
			}
			t.Int32s()[i] = int32(v)
		default:
			SetFloat(t, i, float64(v))
		}
	}
	return t, nil
}

// checkValues checks the arguments of FromFloat64s and FromInt64s.
func checkValues(dtype tensor.Dtype, n int, shape []int) error {
	if err := checkShape(shape); err != nil {
		return fmt.Errorf("nabla: %v", err)
	}
	if n != ShapeSize(shape) {
		return fmt.Errorf("nabla: %d values for shape %s", n, ShapeString(shape))
	}
	if err := checkDType(dtype); err != nil {
		return fmt.Errorf("nabla: %v", err)
	}
	return nil
}

// fitsInteger reports whether v is an integer that the integer dtype holds.
func fitsInteger(v float64, dtype tensor.Dtype) bool {
	if v != math.Trunc(v) {
		return false // NaN and fractions
	}
	if dtype == Int32 {
		return v >= math.MinInt32 && v <= math.MaxInt32
	}
	return v >= math.MinInt64 && v < math.MaxInt64 // 2⁶³ rounds onto MaxInt64
}

// Float64s returns t's elements as float64 (a copy, converted if t is not
// float64; an int64 beyond 2⁵³ rounds).
func Float64s(t *tensor.Dense) []float64 {
	if t.Dtype() == Float64 {
		return append([]float64(nil), t.Float64s()...)
	}
	out := make([]float64, heldLen(t))
	for i := range out {
		out[i] = Float(t, i)
	}
	return out
}

// Int64s returns t's elements as int64 (a copy; float values are converted
// as Go converts them, toward zero).
func Int64s(t *tensor.Dense) []int64 {
	switch t.Dtype() {
	case Int64:
		return append([]int64(nil), t.Int64s()...)
	case Int32:
		out := make([]int64, len(t.Int32s()))
		for i, v := range t.Int32s() {
			out[i] = int64(v)
		}
		return out
	}
	out := make([]int64, heldLen(t))
	for i := range out {
		out[i] = int64(Float(t, i))
	}
	return out
}

// Float returns element i of a tensor's backing data as a float64.
func Float(t *tensor.Dense, i int) float64 {
	switch t.Dtype() {
	case Float32:
		return float64(t.Float32s()[i])
	case Int32:
		return float64(t.Int32s()[i])
	case Int64:
		return float64(t.Int64s()[i])
	}
	return t.Float64s()[i]
}

// SetFloat sets element i of a tensor's backing data to v (truncated
// toward zero for an integer tensor).
func SetFloat(t *tensor.Dense, i int, v float64) {
	switch t.Dtype() {
	case Float32:
		t.Float32s()[i] = float32(v)
	case Int32:
		t.Int32s()[i] = int32(v)
	case Int64:
		t.Int64s()[i] = int64(v)
	default:
		t.Float64s()[i] = v
	}
}
