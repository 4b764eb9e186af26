package vek

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// special are values whose handling differs between careless
// implementations: zeros, infinities, subnormals, NaNs (quiet and
// signalling, with payloads and signs), extremes.
var special64 = []uint64{
	0, 1 << 63, 0x7ff0000000000000, 0xfff0000000000000, // ±0, ±Inf
	1, 0x800fffffffffffff, 0x0008000000000000, // subnormals
	0x7ff8000000000000, 0xfff8000000000001, 0x7ff0000000000001, 0xfff4000000000abc, // NaNs
	0x7fefffffffffffff, 0x0010000000000000, 0x3ff0000000000000, 0xbff0000000000000,
}

var special32 = []uint32{
	0, 1 << 31, 0x7f800000, 0xff800000,
	1, 0x807fffff, 0x00400000,
	0x7fc00000, 0xffc00001, 0x7f800001, 0xffa00abc,
	0x7f7fffff, 0x00800000, 0x3f800000, 0xbf800000,
}

// values returns n float64s: one in 4 a special value, the others
// spread over all magnitudes and signs.
func values64(rng *rand.Rand, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		switch rng.IntN(4) {
		case 0:
			xs[i] = math.Float64frombits(special64[rng.IntN(len(special64))])
		case 1:
			xs[i] = math.Float64frombits(rng.Uint64())
		default:
			xs[i] = rng.NormFloat64() * math.Exp2(float64(rng.IntN(40)-20))
		}
	}
	return xs
}

func values32(rng *rand.Rand, n int) []float32 {
	xs := make([]float32, n)
	for i := range xs {
		switch rng.IntN(4) {
		case 0:
			xs[i] = math.Float32frombits(special32[rng.IntN(len(special32))])
		case 1:
			xs[i] = math.Float32frombits(rng.Uint32())
		default:
			xs[i] = float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(40)-20)))
		}
	}
	return xs
}

func isNaN[T Float](v T) bool { return v != v }

func bits[T Float](v T) uint64 {
	if is32[T]() {
		return uint64(math.Float32bits(float32(v)))
	}
	return math.Float64bits(float64(v))
}

// Per-element references, independent of the loops.

func refBin[T Float](op Op, a, b T) T {
	switch op {
	case Add:
		return a + b
	case Sub:
		return a - b
	case Mul:
		return a * b
	}
	return a / b
}

func refUnary[T Float](op UnaryOp, v T) T {
	switch op {
	case Neg:
		return -v
	case Square:
		return v * v
	case Abs:
		return T(math.Abs(float64(v)))
	case ReLU:
		return max(v, 0)
	}
	return T(math.Sqrt(float64(v)))
}

var (
	binOps   = []Op{Add, Sub, Mul, Div}
	unaryOps = []UnaryOp{Neg, Square, Abs, ReLU, Sqrt}
)

// guard is the number of elements after dst's end that must stay as they
// are.
const guard = 9

// check runs f, which sets dst for inputs x and y (want's inputs), on
// every length 0..70 and compares each element with want bit for bit (or
// only its being NaN, with nanOK); the elements after dst must not change.
func check[T Float](t *testing.T, name string, nanOK bool, x, y []T, f func(dst, x, y []T), want func(i int) T) {
	t.Helper()
	for n := 0; n <= 70; n++ {
		buf := make([]T, n+guard)
		for i := range buf {
			buf[i] = T(-7.5)
		}
		f(buf[:n], x[:n], y[:n])
		for i := range n {
			if bits(buf[i]) != bits(want(i)) && !(nanOK && isNaN(buf[i]) && isNaN(want(i))) {
				t.Errorf("%s n=%d [%d]: x=%v (%#x) y=%v (%#x): got %v (%#x), want %v (%#x)", name, n, i,
					x[i], bits(x[i]), y[i], bits(y[i]), buf[i], bits(buf[i]), want(i), bits(want(i)))
				return
			}
		}
		for i := n; i < len(buf); i++ {
			if buf[i] != T(-7.5) {
				t.Fatalf("%s n=%d: wrote element %d past the end", name, n, i)
			}
		}
	}
}

// checkAll compares every exported function of element type T with the
// per-element references and with the Go loops.
func checkAll[T Float](t *testing.T, x, y []T) {
	for _, op := range binOps {
		c := y[3]
		// Which NaN a + b gives when both are NaN depends on the
		// operands' order in the instruction, the compiler's choice,
		// which may differ in the per-element reference.
		check(t, fmt.Sprintf("VV%d", op), true, x, y, func(d, x, y []T) { VV(op, d, x, y) },
			func(i int) T { return refBin(op, x[i], y[i]) })
		check(t, fmt.Sprintf("VS%d", op), true, x, y, func(d, x, _ []T) { VS(op, d, x, c) },
			func(i int) T { return refBin(op, x[i], c) })
		check(t, fmt.Sprintf("SV%d", op), true, x, y, func(d, _, y []T) { SV(op, d, c, y) },
			func(i int) T { return refBin(op, c, y[i]) })
		// Against the loops, whose NaN operand order is the compiler's.
		check(t, fmt.Sprintf("VVloop%d", op), false, x, y, func(d, x, y []T) { VV(op, d, x, y) },
			loopResult(len(x), func(d []T) { vvGo(op, d, x, y[:len(x)]) }))
		check(t, fmt.Sprintf("VSloop%d", op), false, x, y, func(d, x, _ []T) { VS(op, d, x, c) },
			loopResult(len(x), func(d []T) { vsGo(op, d, x, c) }))
		check(t, fmt.Sprintf("SVloop%d", op), false, x, y, func(d, _, y []T) { SV(op, d, c, y) },
			loopResult(len(x), func(d []T) { svGo(op, d, c, y[:len(x)]) }))
	}
	for _, op := range unaryOps {
		check(t, fmt.Sprintf("Unary%d", op), false, x, y, func(d, x, _ []T) { Unary(op, d, x) },
			func(i int) T { return refUnary(op, x[i]) })
		check(t, fmt.Sprintf("Unaryloop%d", op), false, x, y, func(d, x, _ []T) { Unary(op, d, x) },
			loopResult(len(x), func(d []T) { unaryGo(op, d, x) }))
	}
	// In place: dst is x.
	d := append([]T(nil), x...)
	VV(Add, d, d, y)
	for i := range d {
		if bits(d[i]) != bits(refBin(Add, x[i], y[i])) {
			t.Fatalf("VV in place [%d]: got %v, want %v", i, d[i], x[i]+y[i])
		}
	}
}

// loopResult returns element i of what run writes into a slice of n.
func loopResult[T Float](n int, run func(d []T)) func(int) T {
	d := make([]T, n)
	run(d)
	return func(i int) T { return d[i] }
}

// implementations runs f with the assembly (where the processor has it)
// and with the Go loops.
func implementations(t *testing.T, f func(t *testing.T)) {
	defer setUseAsm(useAsm)
	for _, asm := range []bool{true, false} {
		if !setUseAsm(asm) {
			t.Logf("asm=%v: not in this build", asm)
			continue
		}
		t.Run(fmt.Sprintf("asm=%v", asm), f)
	}
}

func TestBitIdentical(t *testing.T) {
	implementations(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for range 20 {
			checkAll(t, values64(rng, 70), values64(rng, 70))
			checkAll(t, values32(rng, 70), values32(rng, 70))
		}
	})
}

// TestSpecialPairs gives every pair of special values to every operation,
// at every position of a vector and its tail.
func TestSpecialPairs(t *testing.T) {
	implementations(t, func(t *testing.T) {
		var x64, y64 []float64
		for _, a := range special64 {
			for _, b := range special64 {
				x64 = append(x64, math.Float64frombits(a))
				y64 = append(y64, math.Float64frombits(b))
			}
		}
		var x32, y32 []float32
		for _, a := range special32 {
			for _, b := range special32 {
				x32 = append(x32, math.Float32frombits(a))
				y32 = append(y32, math.Float32frombits(b))
			}
		}
		for off := 0; off+70 <= len(x64); off += 13 {
			checkAll(t, x64[off:off+70], y64[off:off+70])
			checkAll(t, x32[off:off+70], y32[off:off+70])
		}
	})
}

// TestDefinedTypes checks a type defined on float32.
func TestDefinedTypes(t *testing.T) {
	type f32 float32
	x, y := []f32{1, 2, 3}, []f32{4, 5, 6}
	d := make([]f32, 3)
	VV(Mul, d, x, y)
	if d[0] != 4 || d[1] != 10 || d[2] != 18 {
		t.Fatalf("VV(Mul) = %v", d)
	}
}

func TestDoesNotAllocate(t *testing.T) {
	x, y, d := make([]float32, 100), make([]float32, 100), make([]float32, 100)
	x64 := make([]float64, 100)
	allocs := testing.AllocsPerRun(20, func() {
		VV(Add, d, x, y)
		VS(Div, d, x, 3)
		SV(Sub, d, 2, y)
		Scale(d, x, 2)
		Unary(ReLU, d, x)
		Unary(Sqrt, x64, x64)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run", allocs)
	}
}
