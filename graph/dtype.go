package graph

import (
	"fmt"
	"strconv"

	"gorgonia.org/tensor"
)

// Integer dtypes. Int32 and Int64 hold indices and class labels: inputs,
// constants and the results of ops.Cast, fed to the ops that read integers
// (ops.Gather, ops.ScatterAdd, ops.CrossEntropy, ops.OneHot) or cast to a
// float dtype. Arithmetic computes on floats alone, so mixing dtypes always
// takes an explicit cast, and integer values are never differentiated: a
// parameter cannot be an integer, and gradients never flow into one.
//
// There is no boolean or byte mask dtype. Comparisons (ops.Greater, ops.Less,
// ops.Equal) return 0/1 masks in their inputs' float dtype, as they always
// have: a mask then multiplies, sums and selects (ops.Where) like any other
// value, with no cast and no second set of kernels, and a float mask costs
// nothing a byte mask would save at the sizes nabla runs.

// IsInteger reports whether dtype is an integer dtype nabla holds (int32 or
// int64).
func IsInteger(dtype tensor.Dtype) bool { return dtype == Int32 || dtype == Int64 }

// IsSupported reports whether nodes may have dtype: float32, float64,
// int32 or int64.
func IsSupported(dtype tensor.Dtype) bool { return IsFloat(dtype) || IsInteger(dtype) }

// unsupportedDType says why an op computing on floats does not take t.
func unsupportedDType(t Type) error {
	if IsInteger(t.DType) {
		return fmt.Errorf("%v is not supported: the op computes on float32 or float64 (convert with ops.Cast)", t)
	}
	return fmt.Errorf("dtype %v is not supported (float32 or float64)", t)
}

// checkDType says why a node cannot have dtype, or returns nil.
func checkDType(dtype tensor.Dtype) error {
	if IsSupported(dtype) {
		return nil
	}
	name := "invalid"
	if dtype.Type != nil {
		name = dtype.String()
	}
	return fmt.Errorf("dtype %s is not supported (float32, float64, int32 or int64)", name)
}

// Backing returns t's backing slice ([]float32, []float64, []int32 or
// []int64), or nil for another dtype. Unlike t.Data, it is a slice for a
// scalar too.
func Backing(t *tensor.Dense) any {
	switch t.Dtype() {
	case Float32:
		return t.Float32s()
	case Float64:
		return t.Float64s()
	case Int32:
		return t.Int32s()
	case Int64:
		return t.Int64s()
	}
	return nil
}

// CopyValues copies src's backing data into dst's, which must have the
// same dtype, and returns the number of elements copied (the smaller
// length).
func CopyValues(dst, src *tensor.Dense) int {
	switch dst.Dtype() {
	case Float32:
		return copy(dst.Float32s(), src.Float32s())
	case Float64:
		return copy(dst.Float64s(), src.Float64s())
	case Int32:
		return copy(dst.Int32s(), src.Int32s())
	case Int64:
		return copy(dst.Int64s(), src.Int64s())
	}
	return 0
}

// heldLen is the length of t's backing data.
func heldLen(t *tensor.Dense) int {
	switch t.Dtype() {
	case Float32:
		return len(t.Float32s())
	case Float64:
		return len(t.Float64s())
	case Int32:
		return len(t.Int32s())
	case Int64:
		return len(t.Int64s())
	}
	return 0
}

// ScalarString formats element 0 of t, a scalar, as its shortest exact
// text: "2.5", "-3".
func ScalarString(t *tensor.Dense) string {
	switch t.Dtype() {
	case Int32, Int64:
		return strconv.FormatInt(Int64s(t)[0], 10)
	case Float32:
		return strconv.FormatFloat(Float(t, 0), 'g', -1, 32)
	}
	return strconv.FormatFloat(Float(t, 0), 'g', -1, 64)
}
