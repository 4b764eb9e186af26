package graph

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gorgonia.org/tensor"
)

// The dtypes nabla computes with: float32 and float64, and the integer
// dtypes (see IsInteger) that indices, labels and casts use.
var (
	Float32 = tensor.Float32
	Float64 = tensor.Float64
	Int32   = tensor.Int32
	Int64   = tensor.Int64
)

// Type is a node's static type: a dtype and a fully known shape.
// A scalar has an empty shape.
type Type struct {
	DType tensor.Dtype
	Shape []int
}

// TypeOf returns the Type with the given dtype and shape.
func TypeOf(dtype tensor.Dtype, shape ...int) Type {
	return Type{DType: dtype, Shape: slices.Clone(shape)}
}

// Rank is the number of dimensions (0 for a scalar).
func (t Type) Rank() int { return len(t.Shape) }

// Size is the number of elements.
func (t Type) Size() int { return ShapeSize(t.Shape) }

// IsScalar reports whether t has rank 0.
func (t Type) IsScalar() bool { return len(t.Shape) == 0 }

// Equal reports whether t and u have the same dtype and shape.
func (t Type) Equal(u Type) bool {
	return t.DType == u.DType && slices.Equal(t.Shape, u.Shape)
}

// WithShape returns a Type of t's dtype with the given shape.
func (t Type) WithShape(shape ...int) Type { return TypeOf(t.DType, shape...) }

// String formats t as dtype(shape), e.g. float64(64,784); a scalar is float64().
func (t Type) String() string {
	name := "invalid"
	if t.DType.Type != nil {
		name = t.DType.String()
	}
	return name + ShapeString(t.Shape)
}

// ShapeString formats a shape as (d0,d1,...); a scalar's shape is ().
func ShapeString(shape []int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(d))
	}
	b.WriteByte(')')
	return b.String()
}

// ShapeSize is the number of elements of a shape (1 for a scalar).
func ShapeSize(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// IsFloat reports whether dtype is one nabla computes with (float32 or float64).
func IsFloat(dtype tensor.Dtype) bool { return dtype == Float32 || dtype == Float64 }

// SameDType returns the float dtype shared by all types, or an error naming
// them when they differ (mixing dtypes takes an explicit ops.Cast) or are
// integers (which arithmetic does not take: see IsInteger).
func SameDType(in []Type) (tensor.Dtype, error) {
	if len(in) == 0 {
		return tensor.Dtype{}, fmt.Errorf("no inputs")
	}
	for _, t := range in {
		if t.DType != in[0].DType {
			return tensor.Dtype{}, fmt.Errorf("dtypes differ: %s: convert one with ops.Cast", TypesString(in))
		}
	}
	for _, t := range in {
		if !IsFloat(t.DType) {
			return tensor.Dtype{}, unsupportedDType(t)
		}
	}
	return in[0].DType, nil
}

// TypesString formats a list of types for error messages: "float64(2,3) and float32(3)".
func TypesString(in []Type) string {
	parts := make([]string, len(in))
	for i, t := range in {
		parts[i] = t.String()
	}
	switch len(parts) {
	case 0:
		return "no inputs"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// CheckArity returns an error unless there are exactly n input types.
func CheckArity(in []Type, n int) error {
	if len(in) != n {
		return fmt.Errorf("takes %d inputs, got %d", n, len(in))
	}
	return nil
}

// CheckInputs checks that there are exactly n input types, all of one
// float dtype (float32 or float64), and returns that dtype: the start of
// most ops' type inference. Its errors say to cast where dtypes differ or
// an input is an integer.
func CheckInputs(in []Type, n int) (tensor.Dtype, error) {
	if err := CheckArity(in, n); err != nil {
		return tensor.Dtype{}, err
	}
	return SameDType(in)
}

// NormalizeAxis maps a possibly negative axis (-1 is the last) into [0, rank),
// or returns an error.
func NormalizeAxis(axis, rank int) (int, error) {
	a := axis
	if a < 0 {
		a += rank
	}
	if a < 0 || a >= rank {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	return a, nil
}

// BroadcastShapes returns the NumPy broadcast of the given shapes, or an error.
func BroadcastShapes(shapes ...[]int) ([]int, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make([]int, rank)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := rank - len(s)
		for i, d := range s {
			switch o := out[off+i]; {
			case o == d || d == 1:
			case o == 1:
				out[off+i] = d
			default:
				parts := make([]string, len(shapes))
				for j, s := range shapes {
					parts[j] = ShapeString(s)
				}
				return nil, fmt.Errorf("shapes %s do not broadcast (dimension %d: %d vs %d)",
					strings.Join(parts, " and "), off+i, o, d)
			}
		}
	}
	return out, nil
}

// AllEmpty reports whether every type has no elements: an instruction
// whose outputs are all empty has nothing to compute.
func AllEmpty(types []Type) bool {
	for _, t := range types {
		if t.Size() != 0 {
			return false
		}
	}
	return true
}
