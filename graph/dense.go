package graph

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"
)

// NewDense returns a zeroed, contiguous tensor of the given dtype (float32,
// float64, int32 or int64; anything else gives float64) and shape (no
// dimensions: a scalar). It works for zero-size shapes too. It returns nil,
// rather than crash the process, for a shape no allocation can hold: a
// negative dimension, more elements or bytes than an int counts, or more
// bytes than both MemoryLimit and the physical memory. Zeros says why, and
// holds to MemoryLimit.
func NewDense(dtype tensor.Dtype, shape ...int) *tensor.Dense {
	b, err := Bytes(dtype, shape, math.MaxInt64)
	if err != nil || b > max(MemoryLimit(), physicalBytes()) {
		return nil
	}
	return newDense(dtype, shape)
}

// Zeros returns a zeroed, contiguous tensor of dtype (float32, float64,
// int32 or int64) and shape, or an error naming the shape when a dimension
// is negative, its size overflows an int or its bytes exceed MemoryLimit.
func Zeros(dtype tensor.Dtype, shape ...int) (*tensor.Dense, error) {
	if err := checkDType(dtype); err != nil {
		return nil, fmt.Errorf("nabla: Zeros: %v", err)
	}
	if _, err := Bytes(dtype, shape, 0); err != nil {
		return nil, fmt.Errorf("nabla: Zeros: %v", err)
	}
	return newDense(dtype, shape), nil
}

// newDense allocates a tensor of a shape already checked.
func newDense(dtype tensor.Dtype, shape []int) *tensor.Dense {
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

// NewDenseOf returns a zeroed tensor of type t (nil where NewDense gives
// nil).
func NewDenseOf(t Type) *tensor.Dense { return NewDense(t.DType, t.Shape...) }

// CloneDense returns a contiguous copy of t, the elements of a view (a
// slice or transpose of another tensor) in row-major order, or an error if
// t is nil or empty (a zero tensor.Dense), its dtype is not float32,
// float64, int32 or int64, or the copy would exceed MemoryLimit.
func CloneDense(t *tensor.Dense) (*tensor.Dense, error) {
	if err := checkTensor(t); err != nil {
		return nil, err
	}
	shape := []int(t.Shape())
	if _, err := Bytes(t.Dtype(), shape, 0); err != nil {
		return nil, err
	}
	out := newDense(t.Dtype(), shape)
	if CopyValues(out, t) != ShapeSize(shape) {
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

// Float64s returns t's elements as float64, in row-major order (a copy,
// converted if t is not float64; an int64 beyond 2⁵³ rounds). A view's
// elements are read through its strides. It is nil for a nil or empty
// tensor (a zero tensor.Dense) or one of another dtype.
func Float64s(t *tensor.Dense) []float64 {
	if !readable(t) {
		return nil
	}
	if t.Dtype() == Float64 && !strided(t) {
		return append([]float64(nil), t.Float64s()[:count(t)]...)
	}
	out := make([]float64, count(t))
	for i := range out {
		out[i] = Float(t, i)
	}
	return out
}

// Int64s returns t's elements as int64, in row-major order (a copy; float
// values are converted as Go converts them, toward zero). A view's
// elements are read through its strides. It is nil for a nil or empty
// tensor (a zero tensor.Dense) or one of another dtype.
func Int64s(t *tensor.Dense) []int64 {
	if !readable(t) {
		return nil
	}
	out := make([]int64, count(t))
	at := indexer(t)
	switch t.Dtype() {
	case Int64:
		for i := range out {
			out[i] = t.Int64s()[at(i)]
		}
	case Int32:
		for i := range out {
			out[i] = int64(t.Int32s()[at(i)])
		}
	default:
		for i := range out {
			out[i] = int64(Float(t, i))
		}
	}
	return out
}

// Float returns element i of t, in row-major order, as a float64 (a
// view's element is found through its strides). It is NaN when t is nil,
// empty (a zero tensor.Dense) or of another dtype, or i is out of range.
func Float(t *tensor.Dense, i int) float64 {
	if t == nil {
		return math.NaN()
	}
	switch t.Dtype() {
	case Float32:
		if s := t.Float32s(); inRange(t, len(s), &i) {
			return float64(s[i])
		}
	case Float64:
		if s := t.Float64s(); inRange(t, len(s), &i) {
			return s[i]
		}
	case Int32:
		if s := t.Int32s(); inRange(t, len(s), &i) {
			return float64(s[i])
		}
	case Int64:
		if s := t.Int64s(); inRange(t, len(s), &i) {
			return float64(s[i])
		}
	}
	return math.NaN()
}

// SetFloat sets element i of t, in row-major order, to v (truncated toward
// zero for an integer tensor; a view's element is found through its
// strides). It does nothing when t is nil, empty (a zero tensor.Dense) or
// of another dtype, or i is out of range.
func SetFloat(t *tensor.Dense, i int, v float64) {
	if t == nil {
		return
	}
	switch t.Dtype() {
	case Float32:
		if s := t.Float32s(); inRange(t, len(s), &i) {
			s[i] = float32(v)
		}
	case Float64:
		if s := t.Float64s(); inRange(t, len(s), &i) {
			s[i] = v
		}
	case Int32:
		if s := t.Int32s(); inRange(t, len(s), &i) {
			s[i] = int32(v)
		}
	case Int64:
		if s := t.Int64s(); inRange(t, len(s), &i) {
			s[i] = int64(v)
		}
	}
}

// inRange reports whether t, whose backing holds held elements, has an
// element *i (in row-major order), and maps *i to its index in the
// backing. It is quick for a tensor that is neither a view nor transposed
// in place: Float and SetFloat are called element by element.
func inRange(t *tensor.Dense, held int, i *int) bool {
	if *i < 0 {
		return false
	}
	if !t.IsMaterializable() {
		return *i < held
	}
	n := ShapeSize(t.Shape())
	if !strided(t) {
		return *i < min(n, held)
	}
	if *i >= n {
		return false
	}
	*i = stridedIndex(t.Shape(), t.Strides(), *i)
	return true
}
