package graph

import (
	"fmt"
	"strconv"

	"gorgonia.org/tensor"
)

// Integer dtypes. Int32 and Int64 hold indices and class labels: inputs,
// constants and the results of ops.Cast, fed to the ops that read integers
// (ops.Gather, ops.ScatterAdd, ops.CrossEntropy, ops.OneHot), moved
// (ops.Reshape, ops.Transpose, ops.BroadcastTo) or selected (ops.Where)
// as they are, or cast to a float dtype. Arithmetic computes on floats alone, so mixing dtypes always
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
// []int64), or nil for another dtype, a nil or empty tensor (a zero
// tensor.Dense), or a view whose backing does not hold its elements in
// order (a slice of columns, a transpose: CloneDense copies its elements
// out). Unlike t.Data, it is a slice for a scalar too.
func Backing(t *tensor.Dense) any {
	if !readable(t) || strided(t) {
		return nil
	}
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

// CopyValues copies src's elements into dst's, in row-major order, and
// returns the number of elements copied (the smaller count). The dtypes
// must be the same: otherwise, or when either tensor is nil or empty (a
// zero tensor.Dense), it copies nothing. Views are read and written
// through their strides.
func CopyValues(dst, src *tensor.Dense) int {
	if !readable(dst) || !readable(src) || dst.Dtype() != src.Dtype() {
		return 0
	}
	n := min(count(dst), count(src))
	if strided(dst) || strided(src) {
		switch dst.Dtype() {
		case Float32:
			copyElements(dst.Float32s(), src.Float32s(), indexer(dst), indexer(src), n)
		case Float64:
			copyElements(dst.Float64s(), src.Float64s(), indexer(dst), indexer(src), n)
		case Int32:
			copyElements(dst.Int32s(), src.Int32s(), indexer(dst), indexer(src), n)
		case Int64:
			copyElements(dst.Int64s(), src.Int64s(), indexer(dst), indexer(src), n)
		}
		return n
	}
	switch dst.Dtype() {
	case Float32:
		return copy(dst.Float32s()[:n], src.Float32s())
	case Float64:
		return copy(dst.Float64s()[:n], src.Float64s())
	case Int32:
		return copy(dst.Int32s()[:n], src.Int32s())
	case Int64:
		return copy(dst.Int64s()[:n], src.Int64s())
	}
	return 0
}

// copyElements copies n elements, found in each backing through its
// indexer.
func copyElements[E any](dst, src []E, to, from func(int) int, n int) {
	for i := range n {
		dst[to(i)] = src[from(i)]
	}
}

// checkTensor says why t cannot be read: it is nil, empty (a zero
// tensor.Dense) or of a dtype nabla does not hold.
func checkTensor(t *tensor.Dense) error {
	switch {
	case t == nil:
		return fmt.Errorf("the tensor is nil")
	case t.Dtype().Type == nil:
		return fmt.Errorf("the tensor is empty (a zero tensor.Dense)")
	}
	return checkDType(t.Dtype())
}

// readable reports whether t's elements can be read (see checkTensor).
func readable(t *tensor.Dense) bool { return checkTensor(t) == nil }

// strided reports whether t's backing does not hold its elements in
// row-major order from index 0: a view that skips elements (a slice of
// columns) or a tensor transposed in place, whose elements are found
// through its strides. gorgonia says every empty tensor needs an
// iterator; with at most one element there is nothing to reorder.
func strided(t *tensor.Dense) bool {
	return t.RequiresIterator() && ShapeSize(t.Shape()) > 1
}

// indexer maps the row-major index of an element of t to its index in t's
// backing.
func indexer(t *tensor.Dense) func(int) int {
	if !strided(t) {
		return func(i int) int { return i }
	}
	shape, strides := t.Shape(), t.Strides()
	return func(i int) int { return stridedIndex(shape, strides, i) }
}

// stridedIndex is the index in a backing of element i, in row-major order,
// of a tensor of the given shape and strides.
func stridedIndex(shape, strides []int, i int) int {
	at := 0
	for d := len(shape) - 1; d >= 0; d-- {
		at += i % shape[d] * strides[d]
		i /= shape[d]
	}
	return at
}

// count is the number of elements of t that can be read: its shape's size,
// or fewer when a contiguous backing holds fewer.
func count(t *tensor.Dense) int {
	n := ShapeSize(t.Shape())
	if strided(t) {
		return n
	}
	return min(n, heldLen(t))
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
// text: "2.5", "-3"; "" when t holds no element.
func ScalarString(t *tensor.Dense) string {
	if !readable(t) || count(t) == 0 {
		return ""
	}
	switch t.Dtype() {
	case Int32, Int64:
		return strconv.FormatInt(Int64s(t)[0], 10)
	case Float32:
		return strconv.FormatFloat(Float(t, 0), 'g', -1, 32)
	}
	return strconv.FormatFloat(Float(t, 0), 'g', -1, 64)
}
