//go:build amd64 || arm64

package onnx

import (
	"unsafe"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// viewRaw returns a tensor whose values are raw's bytes themselves, not a
// copy: these CPUs are little-endian, as ONNX's raw data is, and load
// unaligned values. It serves values the graph copies at once (Param and
// Const copy theirs), never one that is kept. ok is false for the dtypes it
// does not view.
func viewRaw(raw []byte, dtype tensor.Dtype, shape []int) (t *tensor.Dense, ok bool) {
	n := graph.ShapeSize(shape)
	if n == 0 || len(raw) != n*int(dtype.Size()) {
		return nil, false
	}
	p := unsafe.Pointer(unsafe.SliceData(raw))
	var backing any
	switch dtype {
	case graph.Float32:
		backing = unsafe.Slice((*float32)(p), n)
	case graph.Float64:
		backing = unsafe.Slice((*float64)(p), n)
	case graph.Int32:
		backing = unsafe.Slice((*int32)(p), n)
	case graph.Int64:
		backing = unsafe.Slice((*int64)(p), n)
	default:
		return nil, false
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(backing)), true
}
