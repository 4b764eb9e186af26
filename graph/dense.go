package graph

import (
	"fmt"

	"gorgonia.org/tensor"
)

// NewDense returns a zeroed, contiguous tensor of the given dtype and shape
// (no dimensions: a scalar). It works for zero-size shapes too.
func NewDense(dtype tensor.Dtype, shape ...int) *tensor.Dense {
	n := ShapeSize(shape)
	var backing any
	switch dtype {
	case Float32:
		backing = make([]float32, n)
	default:
		backing = make([]float64, n)
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(backing))
}

// NewDenseOf returns a zeroed tensor of type t.
func NewDenseOf(t Type) *tensor.Dense { return NewDense(t.DType, t.Shape...) }

// CloneDense returns a contiguous copy of t (materialising views), or an
// error if t's dtype is not float32 or float64.
func CloneDense(t *tensor.Dense) (*tensor.Dense, error) {
	if !IsFloat(t.Dtype()) {
		return nil, fmt.Errorf("dtype %v is not supported (float32 or float64)", t.Dtype())
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
	if src.Dtype() == Float32 {
		if copy(out.Float32s(), src.Float32s()) != ShapeSize(shape) {
			return nil, fmt.Errorf("tensor holds fewer elements than its shape %s", ShapeString(shape))
		}
	} else if copy(out.Float64s(), src.Float64s()) != ShapeSize(shape) {
		return nil, fmt.Errorf("tensor holds fewer elements than its shape %s", ShapeString(shape))
	}
	return out, nil
}

// FromFloat64s returns a tensor of the given dtype and shape holding vals
// (converted to float32 when dtype is Float32). It is a convenience for
// tests and examples; len(vals) must equal the shape's size.
func FromFloat64s(dtype tensor.Dtype, vals []float64, shape ...int) (*tensor.Dense, error) {
	if err := checkShape(shape); err != nil {
		return nil, fmt.Errorf("nabla: %v", err)
	}
	if len(vals) != ShapeSize(shape) {
		return nil, fmt.Errorf("nabla: %d values for shape %s", len(vals), ShapeString(shape))
	}
	if !IsFloat(dtype) {
		return nil, fmt.Errorf("nabla: dtype %v is not supported (float32 or float64)", dtype)
	}
	t := NewDense(dtype, shape...)
	for i, v := range vals {
		SetFloat(t, i, v)
	}
	return t, nil
}

// Float64s returns t's elements as float64 (a copy, converted if t is float32).
func Float64s(t *tensor.Dense) []float64 {
	if t.Dtype() == Float32 {
		src := t.Float32s()
		out := make([]float64, len(src))
		for i, v := range src {
			out[i] = float64(v)
		}
		return out
	}
	return append([]float64(nil), t.Float64s()...)
}

// Float returns element i of a float32 or float64 tensor's backing data.
func Float(t *tensor.Dense, i int) float64 {
	if t.Dtype() == Float32 {
		return float64(t.Float32s()[i])
	}
	return t.Float64s()[i]
}

// SetFloat sets element i of a float32 or float64 tensor's backing data.
func SetFloat(t *tensor.Dense, i int, v float64) {
	if t.Dtype() == Float32 {
		t.Float32s()[i] = float32(v)
		return
	}
	t.Float64s()[i] = v
}
