package nn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"gorgonia.org/tensor"
)

// sameBits reports whether a and b have the same dtype, shape and bit
// patterns (so NaN payloads and the sign of zero count).
func sameBits(a, b *tensor.Dense) error {
	if a.Dtype() != b.Dtype() || !slices.Equal(a.Shape(), b.Shape()) {
		return fmt.Errorf("got %v%v, want %v%v", a.Dtype(), a.Shape(), b.Dtype(), b.Shape())
	}
	n := graph.ShapeSize(a.Shape())
	for i := range n {
		var x, y uint64
		if a.Dtype() == graph.Float32 {
			x, y = uint64(math.Float32bits(a.Float32s()[i])), uint64(math.Float32bits(b.Float32s()[i]))
		} else {
			x, y = math.Float64bits(a.Float64s()[i]), math.Float64bits(b.Float64s()[i])
		}
		if x != y {
			return fmt.Errorf("element %d: got bits %#x, want %#x", i, x, y)
		}
	}
	return nil
}

// sameTensors compares two checkpoints' tensors bit for bit.
func sameTensors(got, want map[string]*tensor.Dense) error {
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
		return fmt.Errorf("got names %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for name, w := range want {
		if err := sameBits(got[name], w); err != nil {
			return fmt.Errorf("tensor %q: %w", name, err)
		}
	}
	return nil
}

func TestSafetensorsRoundTrip(t *testing.T) {
	f32 := tensor.New(tensor.WithShape(2, 5), tensor.WithBacking([]float32{
		1.5, -2, float32(math.Copysign(0, -1)), 0,
		math.Float32frombits(0x7fc00001), // quiet NaN with a payload
		math.Float32frombits(0x7f800001), // signalling NaN
		math.Float32frombits(0xffc12345), // negative NaN with a payload
		float32(math.Inf(-1)), math.Float32frombits(1), math.MaxFloat32,
	}))
	f64 := tensor.New(tensor.WithShape(3, 1, 2), tensor.WithBacking([]float64{
		math.Pi, math.Copysign(0, -1), math.Float64frombits(0x7ff0000000000001),
		math.Float64frombits(0xfff8dead0000beef), math.SmallestNonzeroFloat64, math.Inf(1),
	}))
	base := tensor.New(tensor.WithShape(3, 4), tensor.WithBacking([]float64{
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
	}))
	column, err := base.Slice(nil, tensor.S(1, 3)) // non-contiguous (3,2) view
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		tensors  map[string]*tensor.Dense
		metadata map[string]string
		want     map[string]*tensor.Dense // when it differs from tensors
	}{
		{name: "floats", tensors: map[string]*tensor.Dense{"w32": f32, "w64": f64}},
		{name: "empty", tensors: map[string]*tensor.Dense{}},
		{
			name: "scalar and zero-size",
			tensors: map[string]*tensor.Dense{
				"s32":   tensor.New(tensor.WithShape(), tensor.WithBacking([]float32{-7})),
				"s64":   tensor.New(tensor.WithShape(), tensor.WithBacking([]float64{math.NaN()})),
				"empty": tensor.New(tensor.WithShape(0, 3), tensor.WithBacking([]float32{})),
				"none":  tensor.New(tensor.WithShape(4, 0), tensor.WithBacking([]float64{})),
			},
			metadata: map[string]string{"format": "nabla", "note": `quotes " and <tags> & ünïcode`},
		},
		{
			name:    "view",
			tensors: map[string]*tensor.Dense{"col": column.(*tensor.Dense)},
			want: map[string]*tensor.Dense{"col": tensor.New(tensor.WithShape(3, 2),
				tensor.WithBacking([]float64{1, 2, 5, 6, 9, 10}))},
		},
	} {
		var buf bytes.Buffer
		if err := WriteSafetensors(&buf, tc.tensors, tc.metadata); err != nil {
			t.Fatalf("case %v: write: %v", tc.name, err)
		}
		if n := binary.LittleEndian.Uint64(buf.Bytes()); n%8 != 0 {
			t.Errorf("case %v: got a %d-byte header, want a multiple of 8", tc.name, n)
		}
		// Map iteration order varies between calls: the bytes must not.
		var again bytes.Buffer
		if err := WriteSafetensors(&again, tc.tensors, tc.metadata); err != nil {
			t.Fatalf("case %v: second write: %v", tc.name, err)
		}
		if !bytes.Equal(buf.Bytes(), again.Bytes()) {
			t.Errorf("case %v: two writes of the same input differ", tc.name)
		}
		got, meta, err := ReadSafetensors(&buf)
		if err != nil {
			t.Fatalf("case %v: read: %v", tc.name, err)
		}
		want := tc.want
		if want == nil {
			want = tc.tensors
		}
		if err := sameTensors(got, want); err != nil {
			t.Errorf("case %v: %v", tc.name, err)
		}
		if len(tc.metadata) == 0 && meta != nil || !maps.Equal(meta, tc.metadata) {
			t.Errorf("case %v: got metadata %v, want %v", tc.name, meta, tc.metadata)
		}
	}
}

// The expected bytes are written out by hand from the format's definition.
func TestSafetensorsGolden(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tensors  map[string]*tensor.Dense
		metadata map[string]string
		want     []byte
	}{
		{
			name:    "vector",
			tensors: map[string]*tensor.Dense{"a": tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{1, -2}))},
			// The header {"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}
			// is 54 bytes, padded with 2 spaces to 56 = 0x38. Data:
			// 1 = 0x3f800000, -2 = 0xc0000000, little-endian.
			want: slices.Concat(
				[]byte{0x38, 0, 0, 0, 0, 0, 0, 0},
				[]byte(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}  `),
				[]byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0}),
		},
		{
			name:     "scalar with metadata",
			tensors:  map[string]*tensor.Dense{"s": tensor.New(tensor.WithShape(), tensor.WithBacking([]float64{0.5}))},
			metadata: map[string]string{"format": "pt"},
			// {"__metadata__":{"format":"pt"}, is 32 bytes and
			// "s":{"dtype":"F64","shape":[],"data_offsets":[0,8]}} 52 more:
			// 84, padded with 4 spaces to 88 = 0x58. 0.5 = 0x3fe0000000000000.
			want: slices.Concat(
				[]byte{0x58, 0, 0, 0, 0, 0, 0, 0},
				[]byte(`{"__metadata__":{"format":"pt"},"s":{"dtype":"F64","shape":[],"data_offsets":[0,8]}}    `),
				[]byte{0, 0, 0, 0, 0, 0, 0xe0, 0x3f}),
		},
		{
			name: "two tensors in name order",
			tensors: map[string]*tensor.Dense{
				"z": tensor.New(tensor.WithShape(1), tensor.WithBacking([]float32{1})),
				"b": tensor.New(tensor.WithShape(0), tensor.WithBacking([]float32{})),
			},
			// "b" (zero-size) takes [0,0], "z" [0,4]. Each entry is 52 bytes,
			// so the header is 1+52+1+52+1 = 107, padded with 5 spaces to 112 = 0x70.
			want: slices.Concat(
				[]byte{0x70, 0, 0, 0, 0, 0, 0, 0},
				[]byte(`{"b":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"z":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}     `),
				[]byte{0x00, 0x00, 0x80, 0x3f}),
		},
	} {
		var buf bytes.Buffer
		if err := WriteSafetensors(&buf, tc.tensors, tc.metadata); err != nil {
			t.Fatalf("case %v: %v", tc.name, err)
		}
		if !bytes.Equal(buf.Bytes(), tc.want) {
			t.Errorf("case %v: got\n%q\nwant\n%q", tc.name, buf.Bytes(), tc.want)
		}
	}
}

// rawFile assembles a safetensors file from a header (not padded) and data.
func rawFile(header string, data []byte) []byte {
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return slices.Concat(out, []byte(header), data)
}

// one F32 tensor "a" of shape [2] over bytes [0,8).
const headerA = `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`

func TestReadSafetensorsErrors(t *testing.T) {
	eight := make([]byte, 8)
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"empty file", nil, "shorter than its 8-byte header length"},
		{"short length", []byte{1, 0, 0}, "shorter than its 8-byte header length"},
		{"absurd header length", binary.LittleEndian.AppendUint64(nil, 1<<40), "header length 1099511627776 exceeds the limit"},
		{"header past the end", slices.Concat(binary.LittleEndian.AppendUint64(nil, 100), []byte("{}")), "header length 100 runs past the end of the file (2 header bytes present)"},
		{"invalid JSON", rawFile(`{"a":{"dtype":`, nil), "header: invalid JSON"},
		{"not an object", rawFile(`[1,2]`, nil), "header: not a JSON object"},
		{"data after the object", rawFile(`{} {}`, nil), "invalid JSON: data after the object"},
		{"duplicate names", rawFile(`{"a":{},"a":{}}`, nil), `duplicate name "a"`},
		{"entry not an object", rawFile(`{"a":3}`, nil), `tensor "a": not a JSON object`},
		{"duplicate field", rawFile(`{"a":{"dtype":"F32","dtype":"F64"}}`, nil), `tensor "a": duplicate name "dtype"`},
		{"unknown dtype", rawFile(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,4]}}`, nil), `tensor "a": dtype "U8" is not supported`},
		{"dtype not a string", rawFile(`{"a":{"dtype":32,"shape":[2],"data_offsets":[0,8]}}`, nil), `tensor "a": dtype:`},
		{"missing dtype", rawFile(`{"a":{"shape":[2],"data_offsets":[0,8]}}`, eight), `tensor "a": missing "dtype"`},
		{"missing shape", rawFile(`{"a":{"dtype":"F32","data_offsets":[0,8]}}`, eight), `tensor "a": missing "shape"`},
		{"missing offsets", rawFile(`{"a":{"dtype":"F32","shape":[2]}}`, eight), `tensor "a": missing "data_offsets"`},
		{"negative dimension", rawFile(`{"a":{"dtype":"F32","shape":[2,-1],"data_offsets":[0,0]}}`, nil), `tensor "a": shape [2 -1] has a negative dimension`},
		{"fractional dimension", rawFile(`{"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,8]}}`, eight), `tensor "a": shape:`},
		{"huge shape", rawFile(`{"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`, nil), `tensor "a": shape [4294967296 4294967296] is too large`},
		{"huge shape with a zero", rawFile(`{"a":{"dtype":"F64","shape":[0,4294967296,4294967296],"data_offsets":[0,0]}}`, nil), `tensor "a": shape [0 4294967296 4294967296] is too large`},
		{"three offsets", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4,8]}}`, eight), `tensor "a": data_offsets has 3 values`},
		{"reversed offsets", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}`, eight), `tensor "a": data_offsets [8,0] are not a valid range`},
		{"negative offset", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}}`, eight), `tensor "a": data_offsets [-8,0] are not a valid range`},
		{"offsets do not match the shape", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,12]}}`, make([]byte, 12)), `tensor "a": data_offsets [0,12] span 12 bytes, but F32(2) needs 8`},
		{"overlap", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, make([]byte, 12)),
			`tensor "b": bytes [4,12) overlap tensor "a" at [0,8)`},
		{"hole between tensors", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}}`, make([]byte, 16)),
			`tensor "b": data starts at byte 12, leaving bytes [8,12) to no tensor`},
		{"hole at the start", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, make([]byte, 12)),
			`tensor "a": data starts at byte 4, leaving bytes [0,4) to no tensor`},
		{"truncated data", rawFile(headerA, make([]byte, 6)), `tensor "a": data truncated: needs bytes [0,8) of the data section, which ends at byte 6`},
		{"truncated second tensor", rawFile(`{"a":{"dtype":"F64","shape":[],"data_offsets":[0,8]},"b":{"dtype":"F64","shape":[3],"data_offsets":[8,32]}}`, make([]byte, 8)),
			`tensor "b": data truncated: needs bytes [8,32) of the data section, which ends at byte 8`},
		{"huge tensor, no data", rawFile(`{"a":{"dtype":"F64","shape":[1000000000],"data_offsets":[0,8000000000]}}`, eight), `tensor "a": data truncated`},
		{"data left over", rawFile(headerA, make([]byte, 10)), "data continues past byte 8, where the last tensor ends"},
		{"metadata not an object", rawFile(`{"__metadata__":"x"}`, nil), "__metadata__: not a JSON object"},
		{"metadata value not a string", rawFile(`{"__metadata__":{"k":1}}`, nil), `__metadata__: value of "k" is not a string`},
	} {
		tensors, meta, err := ReadSafetensors(bytes.NewReader(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %v: got error %v, want one containing %q", tc.name, err, tc.want)
		}
		if tensors != nil || meta != nil {
			t.Errorf("case %v: got tensors %v and metadata %v with an error, want nil", tc.name, tensors, meta)
		}
	}
}

// Files from other writers may skip the padding, order tensors other than
// by name and carry fields nabla does not use: all of that reads fine.
func TestReadSafetensorsLenient(t *testing.T) {
	header := `{"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8],"extra":true},"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}`
	data := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40} // a = 1, b = 2
	got, meta, err := ReadSafetensors(bytes.NewReader(rawFile(header, data)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*tensor.Dense{
		"a": tensor.New(tensor.WithShape(), tensor.WithBacking([]float32{1})),
		"b": tensor.New(tensor.WithShape(1), tensor.WithBacking([]float32{2})),
	}
	if err := sameTensors(got, want); err != nil {
		t.Error(err)
	}
	if meta != nil {
		t.Errorf("got metadata %v, want nil", meta)
	}
}

type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.after < len(p) {
		return 0, errors.New("disk full")
	}
	w.after -= len(p)
	return len(p), nil
}

func TestWriteSafetensorsErrors(t *testing.T) {
	ok := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{1, 2}))
	for _, tc := range []struct {
		name     string
		tensors  map[string]*tensor.Dense
		metadata map[string]string
		w        *failingWriter
		want     string
	}{
		{name: "nil tensor", tensors: map[string]*tensor.Dense{"a": ok, "b": nil}, want: `tensor "b": tensor is nil`},
		{name: "zero tensor", tensors: map[string]*tensor.Dense{"a": ok, "z": {}},
			want: `safetensors: tensor "z": tensor is empty (a zero tensor.Dense, with no dtype): make it with tensor.New or graph.NewDense`},
		{name: "reserved name", tensors: map[string]*tensor.Dense{"__metadata__": ok}, want: `tensor "__metadata__": the name "__metadata__" is reserved`},
		{name: "integer dtype", tensors: map[string]*tensor.Dense{"i": tensor.New(tensor.WithShape(2), tensor.WithBacking([]int{1, 2}))}, want: `tensor "i": dtype int is not supported`},
		{name: "invalid UTF-8 name", tensors: map[string]*tensor.Dense{"\xff": ok}, want: "name is not valid UTF-8"},
		{name: "invalid UTF-8 metadata", tensors: map[string]*tensor.Dense{"a": ok}, metadata: map[string]string{"k": "\xfe"}, want: `metadata "k": key or value is not valid UTF-8`},
		{name: "failing length", tensors: map[string]*tensor.Dense{"a": ok}, w: &failingWriter{}, want: "disk full"},
		{name: "failing header", tensors: map[string]*tensor.Dense{"a": ok}, w: &failingWriter{after: 8}, want: "disk full"},
		{name: "failing data", tensors: map[string]*tensor.Dense{"a": ok}, w: &failingWriter{after: 64}, want: `writing tensor "a": disk full`},
	} {
		var w interface{ Write([]byte) (int, error) } = new(bytes.Buffer)
		if tc.w != nil {
			w = tc.w
		}
		err := WriteSafetensors(w, tc.tensors, tc.metadata)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "PANIC") {
			t.Errorf("case %v: got error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// A nil reader or writer is an error, not a panic.
func TestSafetensorsNilReaderWriter(t *testing.T) {
	tensors, meta, err := ReadSafetensors(nil)
	if err == nil || err.Error() != "safetensors: ReadSafetensors: the reader is nil" || tensors != nil || meta != nil {
		t.Errorf("ReadSafetensors(nil) = %v, %v, %v", tensors, meta, err)
	}
	ok := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{1, 2}))
	if err := WriteSafetensors(nil, map[string]*tensor.Dense{"a": ok}, nil); err == nil || err.Error() != "safetensors: WriteSafetensors: the writer is nil" {
		t.Errorf("WriteSafetensors(nil, …) = %v", err)
	}
}

// FuzzReadSafetensors checks that no input makes the reader panic, and that
// whatever it accepts writes back and reads again unchanged. Plain `go test`
// runs the seeds only; run `go test -fuzz=FuzzReadSafetensors ./nn/` to fuzz.
func FuzzReadSafetensors(f *testing.F) {
	var valid bytes.Buffer
	err := WriteSafetensors(&valid, map[string]*tensor.Dense{
		"w": tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 2, 3, 4})),
		"b": tensor.New(tensor.WithShape(), tensor.WithBacking([]float64{-1})),
		"e": tensor.New(tensor.WithShape(0), tensor.WithBacking([]float64{})),
	}, map[string]string{"epoch": "3"})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid.Bytes())
	f.Add(rawFile(headerA, make([]byte, 8)))
	f.Add(rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, make([]byte, 12)))
	f.Fuzz(func(t *testing.T, data []byte) {
		tensors, meta, err := ReadSafetensors(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteSafetensors(&buf, tensors, meta); err != nil {
			t.Fatalf("writing back what was read: %v", err)
		}
		again, meta2, err := ReadSafetensors(&buf)
		if err != nil {
			t.Fatalf("reading back what was written: %v", err)
		}
		if err := sameTensors(again, tensors); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(meta, meta2) {
			t.Fatalf("got metadata %v, want %v", meta2, meta)
		}
	})
}

func ExampleWriteSafetensors() {
	w := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 2, 3, 4}))
	var file bytes.Buffer
	if err := WriteSafetensors(&file, map[string]*tensor.Dense{"layer1.W": w}, map[string]string{"epoch": "10"}); err != nil {
		fmt.Println(err)
		return
	}
	tensors, metadata, err := ReadSafetensors(&file)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tensors["layer1.W"].Shape(), tensors["layer1.W"].Float32s(), metadata["epoch"])
	// Output: (2, 2) [1 2 3 4] 10
}
