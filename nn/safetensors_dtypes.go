package nn

import (
	"encoding/binary"
	"io"
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// writeTensor writes the first n elements of t, a contiguous tensor of a
// dtype nabla writes, through buf.
func writeTensor(w io.Writer, t *tensor.Dense, n int, buf []byte) error {
	switch t.Dtype() {
	case graph.Float32:
		return writeChunks(w, t.Float32s()[:n], 4, buf, encodeFloat32s)
	case graph.Int32:
		return writeChunks(w, t.Int32s()[:n], 4, buf, encodeInt32s)
	case graph.Int64:
		return writeChunks(w, t.Int64s()[:n], 8, buf, encodeInt64s)
	}
	return writeChunks(w, t.Float64s()[:n], 8, buf, encodeFloat64s)
}

func encodeInt32s(dst []byte, src []int32) {
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], uint32(v))
	}
}

func encodeInt64s(dst []byte, src []int64) {
	for i, v := range src {
		binary.LittleEndian.PutUint64(dst[8*i:], uint64(v))
	}
}

func decodeInt32s(dst []int32, src []byte) {
	for i := range dst {
		dst[i] = int32(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func decodeInt64s(dst []int64, src []byte) {
	for i := range dst {
		dst[i] = int64(binary.LittleEndian.Uint64(src[8*i:]))
	}
}

// decodeFloat16s widens IEEE 754 half-precision values (1 sign bit, 5
// exponent bits biased by 15, 10 fraction bits) to float32.
func decodeFloat16s(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = float16ToFloat32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func float16ToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch exp {
	case 0x1f: // infinities and NaNs, payload kept
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case 0: // zeros and subnormals: frac·2⁻²⁴, exact in float32
		f := float32(frac) * (1.0 / (1 << 24))
		return math.Float32frombits(sign | math.Float32bits(f))
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// decodeBFloat16s widens bfloat16 values, the top half of a float32's
// bits, to float32.
func decodeBFloat16s(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(src[2*i:])) << 16)
	}
}
