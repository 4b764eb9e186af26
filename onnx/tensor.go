package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
	"gorgonia.org/tensor"
)

// dtypes maps the ONNX element types nabla holds to its dtypes.
var dtypes = map[onnxpb.TensorProto_DataType]tensor.Dtype{
	onnxpb.TensorProto_FLOAT:  graph.Float32,
	onnxpb.TensorProto_DOUBLE: graph.Float64,
	onnxpb.TensorProto_INT32:  graph.Int32,
	onnxpb.TensorProto_INT64:  graph.Int64,
}

// dtypeOf returns the nabla dtype of ONNX element type t. nabla has no
// boolean dtype: ONNX's bool is float32 holding 0 or 1, the masks that
// nabla's comparisons give.
func dtypeOf(t int32) (tensor.Dtype, error) {
	if d, ok := dtypes[onnxpb.TensorProto_DataType(t)]; ok {
		return d, nil
	}
	if onnxpb.TensorProto_DataType(t) == onnxpb.TensorProto_BOOL {
		return graph.Float32, nil
	}
	name, ok := onnxpb.TensorProto_DataType_name[t]
	if !ok {
		name = strconv.Itoa(int(t)) + " (unknown)"
	}
	return tensor.Dtype{}, fmt.Errorf("element type %s is not supported (float, double, int32, int64 or bool)", name)
}

// elemType returns the ONNX element type of a nabla dtype.
func elemType(d tensor.Dtype) onnxpb.TensorProto_DataType {
	for t, dt := range dtypes {
		if dt == d {
			return t
		}
	}
	return onnxpb.TensorProto_UNDEFINED
}

// shapeOf checks ONNX dims and returns them as a shape whose bytes for
// dtype fit the memory limit, before anything of that size is allocated.
func shapeOf(dims []int64, dtype tensor.Dtype) ([]int, error) {
	shape := make([]int, len(dims))
	for i, d := range dims {
		if d < 0 || d > math.MaxInt32*int64(1<<31) {
			return nil, fmt.Errorf("dims %v: dimension %d (%d) is negative or too large", dims, i, d)
		}
		shape[i] = int(d)
	}
	if _, err := graph.Bytes(dtype, shape, 0); err != nil {
		return nil, err
	}
	return shape, nil
}

// readTensor decodes a TensorProto into a dense tensor, checking that the
// data it holds (inline, raw or external, read from dir) has exactly the
// size its dims claim before allocating.
func readTensor(t *onnxpb.TensorProto, dir string) (*tensor.Dense, error) {
	return decodeTensor(t, dir, false)
}

// readInitializer is readTensor for a value the graph copies at once
// (Param, Const): raw data in the model is viewed in place, not copied
// (see viewRaw).
func readInitializer(t *onnxpb.TensorProto, dir string) (*tensor.Dense, error) {
	return decodeTensor(t, dir, true)
}

// decodeTensor decodes a tensor, viewing its raw data in place if view
// says so and the platform allows.
func decodeTensor(t *onnxpb.TensorProto, dir string, view bool) (*tensor.Dense, error) {
	if t == nil {
		return nil, errors.New("no tensor")
	}
	if t.Segment != nil {
		return nil, errors.New("segmented tensors are not supported")
	}
	dtype, err := dtypeOf(t.GetDataType())
	if err != nil {
		return nil, err
	}
	shape, err := shapeOf(t.GetDims(), dtype)
	if err != nil {
		return nil, err
	}
	n := graph.ShapeSize(shape)
	raw := t.GetRawData()
	isBool := onnxpb.TensorProto_DataType(t.GetDataType()) == onnxpb.TensorProto_BOOL
	width := int64(dtype.Size())
	if isBool {
		width = 1
	}
	if t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		if raw, err = readExternal(t, dir, int64(n)*width); err != nil {
			return nil, err
		}
	}
	if isBool {
		return boolMask(raw, t.GetInt32Data(), shape)
	}
	if raw != nil || n == 0 {
		if v, ok := viewRaw(raw, dtype, shape); ok && view {
			return v, nil
		}
		return fromRaw(raw, dtype, shape)
	}
	var have int
	switch dtype {
	case graph.Float32:
		have = len(t.GetFloatData())
	case graph.Float64:
		have = len(t.GetDoubleData())
	case graph.Int32:
		have = len(t.GetInt32Data())
	case graph.Int64:
		have = len(t.GetInt64Data())
	}
	if have != n {
		return nil, fmt.Errorf("%v%s holds %d values, want %d", dtype, graph.ShapeString(shape), have, n)
	}
	out := graph.NewDense(dtype, shape...)
	switch dtype {
	case graph.Float32:
		copy(out.Float32s(), t.GetFloatData())
	case graph.Float64:
		copy(out.Float64s(), t.GetDoubleData())
	case graph.Int32:
		copy(out.Int32s(), t.GetInt32Data())
	case graph.Int64:
		copy(out.Int64s(), t.GetInt64Data())
	}
	return out, nil
}

// boolMask decodes a bool tensor, one byte per value (raw) or one int32,
// as a float32 mask.
func boolMask(raw []byte, ints []int32, shape []int) (*tensor.Dense, error) {
	n := graph.ShapeSize(shape)
	if raw == nil && len(ints) != n || raw != nil && len(raw) != n {
		return nil, fmt.Errorf("bool%s holds %d values, want %d", graph.ShapeString(shape), max(len(raw), len(ints)), n)
	}
	out := graph.NewDense(graph.Float32, shape...)
	d := out.Float32s()
	for i := range d {
		if raw != nil && raw[i] != 0 || raw == nil && ints[i] != 0 {
			d[i] = 1
		}
	}
	return out, nil
}

// fromRaw decodes little-endian raw bytes.
func fromRaw(raw []byte, dtype tensor.Dtype, shape []int) (*tensor.Dense, error) {
	n := graph.ShapeSize(shape)
	if len(raw) != n*int(dtype.Size()) {
		return nil, fmt.Errorf("%v%s needs %d bytes of raw data, the tensor has %d", dtype, graph.ShapeString(shape), n*int(dtype.Size()), len(raw))
	}
	out := graph.NewDense(dtype, shape...)
	le := binary.LittleEndian
	switch dtype {
	case graph.Float32:
		d := out.Float32s()
		for i := range d {
			d[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
	case graph.Float64:
		d := out.Float64s()
		for i := range d {
			d[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		}
	case graph.Int32:
		d := out.Int32s()
		for i := range d {
			d[i] = int32(le.Uint32(raw[4*i:]))
		}
	case graph.Int64:
		d := out.Int64s()
		for i := range d {
			d[i] = int64(le.Uint64(raw[8*i:]))
		}
	}
	return out, nil
}

// readExternal reads an external tensor's bytes from a file inside dir,
// refusing paths that leave it and files shorter than the tensor.
func readExternal(t *onnxpb.TensorProto, dir string, want int64) ([]byte, error) {
	var location string
	var offset, length int64 = 0, -1
	for _, kv := range t.GetExternalData() {
		var err error
		switch kv.GetKey() {
		case "location":
			location = kv.GetValue()
		case "offset":
			offset, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		case "length":
			length, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		}
		if err != nil || offset < 0 {
			return nil, fmt.Errorf("external data: bad %s %q", kv.GetKey(), kv.GetValue())
		}
	}
	if dir == "" {
		return nil, fmt.Errorf("external data %q: the model was not read from a file (use ImportFile)", location)
	}
	if !filepath.IsLocal(location) {
		return nil, fmt.Errorf("external data %q: the path leaves the model's folder", location)
	}
	if length >= 0 && length != want {
		return nil, fmt.Errorf("external data %q: length %d, want %d bytes", location, length, want)
	}
	f, err := os.Open(filepath.Join(dir, location))
	if err != nil {
		return nil, fmt.Errorf("external data: %v", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() < offset || st.Size()-offset < want {
		return nil, fmt.Errorf("external data %q: the file is shorter than bytes [%d,%d)", location, offset, offset+want)
	}
	buf := make([]byte, want)
	if _, err := f.ReadAt(buf, offset); err != nil && !(errors.Is(err, io.EOF) && want == 0) {
		return nil, fmt.Errorf("external data %q: %v", location, err)
	}
	return buf, nil
}

// writeTensor encodes a value of type t as a TensorProto with raw data.
func writeTensor(name string, t graph.Type, v *tensor.Dense) *onnxpb.TensorProto {
	dims := int64s(t.Shape)
	le := binary.LittleEndian
	var raw []byte
	switch d := graph.Backing(v).(type) {
	case []float32:
		for _, x := range d {
			raw = le.AppendUint32(raw, math.Float32bits(x))
		}
	case []float64:
		for _, x := range d {
			raw = le.AppendUint64(raw, math.Float64bits(x))
		}
	case []int32:
		for _, x := range d {
			raw = le.AppendUint32(raw, uint32(x))
		}
	case []int64:
		for _, x := range d {
			raw = le.AppendUint64(raw, uint64(x))
		}
	}
	et := int32(elemType(v.Dtype()))
	return &onnxpb.TensorProto{Name: &name, Dims: dims, DataType: &et, RawData: raw}
}

// int64s converts ints to int64s.
func int64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// ReadTensor decodes a serialized TensorProto (a backend test's
// input_0.pb, say) with inline or raw data.
func ReadTensor(data []byte) (*tensor.Dense, error) {
	t := &onnxpb.TensorProto{}
	if err := proto.Unmarshal(data, t); err != nil {
		return nil, fmt.Errorf("nabla: onnx.ReadTensor: not a TensorProto: %v", err)
	}
	v, err := readTensor(t, "")
	if err != nil {
		return nil, fmt.Errorf("nabla: onnx.ReadTensor: %q: %v", t.GetName(), err)
	}
	return v, nil
}
