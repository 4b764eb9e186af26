package onnx

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/nabla-go/nabla/onnx/onnxpb"
)

// Field numbers of the wire format that unmarshalModel walks.
const (
	modelGraphField       = 7 // ModelProto.graph
	graphInitializerField = 5 // GraphProto.initializer
	tensorRawDataField    = 9 // TensorProto.raw_data
)

// unmarshalModel decodes a serialized ModelProto as proto.Unmarshal does,
// except that the raw data of the main graph's initializers is not copied:
// their RawData are slices of data (capped at their length). Import builds
// those into the graph's own copies, so a large model's weights are copied
// once, not twice. The rest (a few bytes per tensor besides the weights) is
// re-encoded without the raw data and decoded normally; anything unusual (a
// graph field given twice) falls back to proto.Unmarshal.
func unmarshalModel(data []byte) (*onnxpb.ModelProto, error) {
	m := &onnxpb.ModelProto{}
	stripped, raws, ok := stripRawData(data)
	if !ok {
		return m, proto.Unmarshal(data, m)
	}
	if err := proto.Unmarshal(stripped, m); err != nil {
		return nil, err
	}
	inits := m.GetGraph().GetInitializer()
	if len(inits) != len(raws) { // cannot happen for a well-formed walk; stay exact
		m = &onnxpb.ModelProto{}
		return m, proto.Unmarshal(data, m)
	}
	for i, t := range inits {
		if raws[i] != nil {
			t.RawData = raws[i]
		}
	}
	return m, nil
}

// stripRawData returns the model's encoding without its graph's
// initializers' raw_data, and those raw data (nil where a tensor has none),
// in order; ok is false if the encoding is not one it walks.
func stripRawData(data []byte) (stripped []byte, raws [][]byte, ok bool) {
	graphs := 0
	out := make([]byte, 0, 1024)
	err := eachField(data, func(num protowire.Number, typ protowire.Type, field, value []byte) bool {
		if num != modelGraphField || typ != protowire.BytesType {
			out = append(out, field...)
			return true
		}
		graphs++
		g := make([]byte, 0, 1024)
		ok := eachField(value, func(num protowire.Number, typ protowire.Type, field, value []byte) bool {
			if num != graphInitializerField || typ != protowire.BytesType {
				g = append(g, field...)
				return true
			}
			var t []byte
			var raw []byte
			ok := eachField(value, func(num protowire.Number, typ protowire.Type, field, value []byte) bool {
				if num == tensorRawDataField && typ == protowire.BytesType {
					raw = value[:len(value):len(value)] // the last one counts, as in proto.Unmarshal
					return true
				}
				t = append(t, field...)
				return true
			}) == nil
			if !ok {
				return false
			}
			raws = append(raws, raw)
			g = protowire.AppendTag(g, graphInitializerField, protowire.BytesType)
			g = protowire.AppendBytes(g, t)
			return true
		}) == nil
		if !ok {
			return false
		}
		out = protowire.AppendTag(out, modelGraphField, protowire.BytesType)
		out = protowire.AppendBytes(out, g)
		return true
	})
	if err != nil || graphs != 1 {
		return nil, nil, false
	}
	return out, raws, true
}

// errWalk stops eachField.
type errWalk struct{}

func (errWalk) Error() string { return "not walked" }

// eachField calls fn with each field of an encoded message: its number,
// wire type, whole encoding and, for length-delimited fields, the bytes
// inside. fn returning false, or a malformed field, stops it with an error.
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, field, value []byte) bool) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		var value []byte
		if typ == protowire.BytesType {
			v, k := protowire.ConsumeBytes(b[n:])
			if k < 0 {
				return protowire.ParseError(k)
			}
			value = v
		}
		if !fn(num, typ, b[:n+m], value) {
			return errWalk{}
		}
		b = b[n+m:]
	}
	return nil
}
