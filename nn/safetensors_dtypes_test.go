package nn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

func TestSafetensorsIntegerRoundTrip(t *testing.T) {
	i32, err := graph.FromInt64s(graph.Int32, []int64{math.MinInt32, -1, 0, 7, math.MaxInt32, 12345}, 2, 3)
	require.NoError(t, err)
	i64, err := graph.FromInt64s(graph.Int64, []int64{math.MinInt64, -1, 1<<53 + 1, math.MaxInt64}, 4)
	require.NoError(t, err)
	scalar, err := graph.FromInt64s(graph.Int64, []int64{42})
	require.NoError(t, err)
	in := map[string]*tensor.Dense{"i32": i32, "i64": i64, "steps": scalar}
	var file bytes.Buffer
	require.NoError(t, WriteSafetensors(&file, in, nil))
	header := `{"i32":{"dtype":"I32","shape":[2,3],"data_offsets":[0,24]},"i64":{"dtype":"I64","shape":[4],"data_offsets":[24,56]},` +
		`"steps":{"dtype":"I64","shape":[],"data_offsets":[56,64]}}`
	require.Contains(t, file.String(), header)
	// The data section, by hand: little-endian two's complement.
	data := file.Bytes()[file.Len()-64:]
	require.Equal(t, uint32(0x80000000), binary.LittleEndian.Uint32(data[0:]), "MinInt32")
	require.Equal(t, uint32(0xffffffff), binary.LittleEndian.Uint32(data[4:]), "-1")
	require.Equal(t, uint64(1<<53+1), binary.LittleEndian.Uint64(data[24+16:]))
	require.Equal(t, uint64(42), binary.LittleEndian.Uint64(data[56:]))

	out, _, err := ReadSafetensors(bytes.NewReader(file.Bytes()))
	require.NoError(t, err)
	for name, want := range in {
		got := out[name]
		require.Equal(t, want.Dtype(), got.Dtype(), name)
		require.Equal(t, want.Shape(), got.Shape(), name)
		require.Equal(t, graph.Int64s(want), graph.Int64s(got), name)
	}
}

// halfReference is the value of IEEE half-precision bits h, from the
// format's definition.
func halfReference(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10)&0x1f, float64(h&0x3ff)
	switch exp {
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	case 0:
		return sign * math.Ldexp(frac/1024, -14)
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

// bfloat16Reference is the value of bfloat16 bits b (a float32's sign, 8
// exponent bits and the top 7 fraction bits), from the format's definition.
func bfloat16Reference(b uint16) float64 {
	sign := 1.0
	if b&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(b>>7)&0xff, float64(b&0x7f)
	switch exp {
	case 0xff:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	case 0:
		return sign * math.Ldexp(frac/128, -126)
	}
	return sign * math.Ldexp(1+frac/128, exp-127)
}

// TestReadHalfPrecisionExhaustively reads every F16 and BF16 bit pattern
// and compares with the formats' definitions (signs of zeros and NaNs
// included).
func TestReadHalfPrecisionExhaustively(t *testing.T) {
	data := make([]byte, 2*65536)
	for i := range 65536 {
		binary.LittleEndian.PutUint16(data[2*i:], uint16(i))
	}
	for _, c := range []struct {
		dtype string
		ref   func(uint16) float64
	}{{"F16", halfReference}, {"BF16", bfloat16Reference}} {
		file := rawFile(`{"h":{"dtype":"`+c.dtype+`","shape":[256,256],"data_offsets":[0,131072]}}`, data)
		out, _, err := ReadSafetensors(bytes.NewReader(file))
		require.NoError(t, err)
		h := out["h"]
		require.Equal(t, graph.Float32, h.Dtype())
		require.Equal(t, tensor.Shape{256, 256}, h.Shape())
		for i, got := range h.Float32s() {
			want := c.ref(uint16(i))
			g := float64(got)
			ok := g == want && math.Signbit(g) == math.Signbit(want) || math.IsNaN(g) && math.IsNaN(want) && math.Signbit(g) == (i&0x8000 != 0)
			if !ok {
				t.Fatalf("case %s bits %#04x: got %v, want %v", c.dtype, i, g, want)
			}
		}
	}
}

// A PyTorch state dict saved in half precision, with an integer buffer:
// weight F16, bias BF16, num_batches_tracked I64.
func halfStateDict() []byte {
	header := `{"__metadata__":{"format":"pt"},"bias":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},` +
		`"num_batches_tracked":{"dtype":"I64","shape":[],"data_offsets":[4,12]},` +
		`"weight":{"dtype":"F16","shape":[2,2],"data_offsets":[12,20]}}`
	var data []byte
	for _, b := range []uint16{0x3f80, 0xc020} { // BF16 1, -2.5
		data = binary.LittleEndian.AppendUint16(data, b)
	}
	data = binary.LittleEndian.AppendUint64(data, 300)
	for _, h := range []uint16{0x3c00, 0x7bff, 0x0001, 0xb800} { // F16 1, 65504, 2⁻²⁴, -0.5
		data = binary.LittleEndian.AppendUint16(data, h)
	}
	return rawFile(header, data)
}

func TestLoadHalfPrecisionAndIntegerBuffers(t *testing.T) {
	for _, dtype := range []tensor.Dtype{graph.Float32, graph.Float64} {
		g := graph.New()
		state := []Named{
			{Name: "weight", Node: g.Param("weight", graph.NewDense(dtype, 2, 2))},
			{Name: "bias", Node: g.Param("bias", graph.NewDense(dtype, 2))},
			{Name: "num_batches_tracked", Node: g.Param("num_batches_tracked", graph.NewDense(dtype))},
		}
		m := machine(t, nil, updatesOf(state))
		require.NoError(t, Load(bytes.NewReader(halfStateDict()), m, state), "dtype %v", dtype)
		got := snapshotOf(t, m, state)
		require.Equal(t, []float64{1, 65504, math.Ldexp(1, -24), -0.5}, graph.Float64s(got["weight"]), "dtype %v", dtype)
		require.Equal(t, []float64{1, -2.5}, graph.Float64s(got["bias"]), "dtype %v", dtype)
		require.Equal(t, []float64{300}, graph.Float64s(got["num_batches_tracked"]), "dtype %v", dtype)
		require.Equal(t, dtype, got["weight"].Dtype())
	}
}

func TestLoadIntegersThatFloatsDoNotHold(t *testing.T) {
	for _, c := range []struct {
		dtype tensor.Dtype
		value int64
		want  string
	}{
		{graph.Float32, 1<<24 + 1, "n is int64() in the file, want float32() (value 16777217 at index 0 has no exact float32)"},
		{graph.Float64, 1<<53 + 1, "n is int64() in the file, want float64() (value 9007199254740993 at index 0 has no exact float64)"},
		{graph.Float64, math.MaxInt64, "value 9223372036854775807 at index 0 has no exact float64"},
	} {
		v, err := graph.FromInt64s(graph.Int64, []int64{c.value})
		require.NoError(t, err)
		var file bytes.Buffer
		require.NoError(t, WriteSafetensors(&file, map[string]*tensor.Dense{"n": v}, nil))
		g := graph.New()
		state := []Named{{Name: "n", Node: g.Param("n", graph.NewDense(c.dtype))}}
		m := machine(t, nil, updatesOf(state))
		err = Load(bytes.NewReader(file.Bytes()), m, state)
		var le *LoadError
		require.True(t, errors.As(err, &le), "case %v: got %v", c.value, err)
		require.ErrorContains(t, err, c.want)
	}
	// Exact values load, a float32 one included.
	v, _ := graph.FromInt64s(graph.Int32, []int64{1 << 24, -3}, 2)
	var file bytes.Buffer
	require.NoError(t, WriteSafetensors(&file, map[string]*tensor.Dense{"n": v}, nil))
	g := graph.New()
	state := []Named{{Name: "n", Node: g.Param("n", graph.NewDense(graph.Float32, 2))}}
	m := machine(t, nil, updatesOf(state))
	require.NoError(t, Load(bytes.NewReader(file.Bytes()), m, state))
	require.Equal(t, []float32{1 << 24, -3}, snapshotOf(t, m, state)["n"].Float32s())
}

// A float checkpoint of the other precision is still a mismatch: only
// conversions no model would have written itself are made.
func TestLoadKeepsFloatPrecisionsApart(t *testing.T) {
	f32, _ := graph.FromFloat64s(graph.Float32, []float64{1}, 1)
	var file bytes.Buffer
	require.NoError(t, WriteSafetensors(&file, map[string]*tensor.Dense{"w": f32}, nil))
	g := graph.New()
	state := []Named{{Name: "w", Node: g.Param("w", graph.NewDense(graph.Float64, 1))}}
	err := Load(bytes.NewReader(file.Bytes()), machine(t, nil, updatesOf(state)), state)
	require.EqualError(t, err, "nn: Load: checkpoint does not match (nothing loaded): w is float32(1) in the file, want float64(1)")
}
