package ops

import (
	"fmt"
	"math"
	"strconv"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// Indices and class labels (Gather, ScatterAdd, CrossEntropy, OneHot) are
// int32 or int64 tensors, or, as before integer dtypes existed, integer
// values held as floats of the data's dtype.

// checkIndexType says why a tensor of type t cannot hold the indices (what:
// "indices", "labels") into values of the float dtype data, or returns nil.
func checkIndexType(what string, t graph.Type, data graph.Type) error {
	if graph.IsInteger(t.DType) || t.DType == data.DType {
		return nil
	}
	if !graph.IsFloat(t.DType) {
		return fmt.Errorf("%s have dtype %v: give int32 or int64 %s", what, t.DType, what)
	}
	_, err := graph.SameDType([]graph.Type{data, t})
	return fmt.Errorf("%v (or give int32 or int64 %s)", err, what)
}

// checkIndexed checks the inputs of an op indexing the float values in[0]
// by in[1] (what: "indices" or "labels") and returns the values' dtype.
func checkIndexed(in []graph.Type, what string) (tensor.Dtype, error) {
	if err := graph.CheckArity(in, 2); err != nil {
		return tensor.Dtype{}, err
	}
	dtype, err := graph.SameDType(in[:1])
	if err != nil {
		return tensor.Dtype{}, err
	}
	return dtype, checkIndexType(what, in[1], in[0])
}

// indexData reads the elements of an indices or labels tensor, whatever
// its dtype, without copying them. Kernels call at once per index, beside
// a row's worth of work, so the switch costs nothing measurable.
type indexData struct {
	i32 []int32
	i64 []int64
	f32 []float32
	f64 []float64
}

// indicesOf returns t's elements for reading.
func indicesOf(t *tensor.Dense) indexData {
	switch t.Dtype() {
	case graph.Int32:
		return indexData{i32: t.Int32s()}
	case graph.Int64:
		return indexData{i64: t.Int64s()}
	case graph.Float32:
		return indexData{f32: t.Float32s()}
	}
	return indexData{f64: t.Float64s()}
}

// len is the number of indices.
func (d indexData) len() int { return len(d.i32) + len(d.i64) + len(d.f32) + len(d.f64) }

// at returns element i as an index in [0,n); ok is false when it is not
// one (out of range, or a float that is not an integer).
func (d indexData) at(i, n int) (index int, ok bool) {
	switch {
	case d.i64 != nil:
		v := d.i64[i]
		return int(v), v >= 0 && v < int64(n)
	case d.i32 != nil:
		v := d.i32[i]
		return int(v), v >= 0 && int(v) < n
	case d.f32 != nil:
		return floatIndex(float64(d.f32[i]), n)
	}
	return floatIndex(d.f64[i], n)
}

// floatIndex returns v as an index in [0,n), or false unless v is an
// integer in that range.
func floatIndex(v float64, n int) (int, bool) {
	if v >= 0 && v < float64(n) && v == math.Trunc(v) {
		return int(v), true
	}
	return 0, false
}

// format writes element i as it was given, for error messages.
func (d indexData) format(i int) string {
	switch {
	case d.i64 != nil:
		return strconv.FormatInt(d.i64[i], 10)
	case d.i32 != nil:
		return strconv.FormatInt(int64(d.i32[i]), 10)
	case d.f32 != nil:
		return strconv.FormatFloat(float64(d.f32[i]), 'g', -1, 32)
	}
	return strconv.FormatFloat(d.f64[i], 'g', -1, 64)
}
