package vek

import "unsafe"

// Float is the element type of the slices: float32 or float64, or a type
// defined on either.
type Float interface{ ~float32 | ~float64 }

// Op is an arithmetic operation of two operands.
type Op uint8

// The operations of VV, VS and SV.
const (
	Add Op = iota // a + b
	Sub           // a - b
	Mul           // a * b
	Div           // a / b
)

// UnaryOp is an operation of one operand.
type UnaryOp uint8

// The operations of Unary.
const (
	Neg    UnaryOp = iota // -x
	Square                // x * x
	Abs                   // |x|, math.Abs
	ReLU                  // max(x, 0): NaN stays NaN, -0 gives +0
	Sqrt                  // math.Sqrt, rounded once to the element type
)

// The functions below set dst[i] for each i of dst; the slice operands
// must be at least as long as dst. dst may be one of them but must not
// overlap them otherwise. They call the assembly or the Go loops
// directly, so that their arguments do not escape. An Op or UnaryOp out
// of range leaves dst unchanged.

// VV sets dst[i] = x[i] op y[i].
func VV[T Float](op Op, dst, x, y []T) {
	x, y = x[:len(dst)], y[:len(dst)]
	if useAsm {
		if is32[T]() {
			vv32(op, as[float32](dst), as[float32](x), as[float32](y))
		} else {
			vv64(op, as[float64](dst), as[float64](x), as[float64](y))
		}
		return
	}
	vvGo(op, dst, x, y)
}

// VS sets dst[i] = x[i] op c.
func VS[T Float](op Op, dst, x []T, c T) {
	x = x[:len(dst)]
	if useAsm {
		if is32[T]() {
			vs32(op, as[float32](dst), as[float32](x), float32(c))
		} else {
			vs64(op, as[float64](dst), as[float64](x), float64(c))
		}
		return
	}
	vsGo(op, dst, x, c)
}

// SV sets dst[i] = c op y[i].
func SV[T Float](op Op, dst []T, c T, y []T) {
	y = y[:len(dst)]
	if useAsm {
		if is32[T]() {
			sv32(op, as[float32](dst), float32(c), as[float32](y))
		} else {
			sv64(op, as[float64](dst), float64(c), as[float64](y))
		}
		return
	}
	svGo(op, dst, c, y)
}

// Scale sets dst[i] = x[i] * c; it is VS(Mul, dst, x, c).
func Scale[T Float](dst, x []T, c T) { VS(Mul, dst, x, c) }

// Unary sets dst[i] = op(x[i]).
func Unary[T Float](op UnaryOp, dst, x []T) {
	x = x[:len(dst)]
	if useAsm {
		if is32[T]() {
			unary32(op, as[float32](dst), as[float32](x))
		} else {
			unary64(op, as[float64](dst), as[float64](x))
		}
		return
	}
	unaryGo(op, dst, x)
}

// is32 reports whether T is 4 bytes wide (float32).
func is32[T Float]() bool {
	var z T
	return unsafe.Sizeof(z) == 4
}

// as returns s as a []U of the same length, without copying; T and U
// must have the same size.
func as[U, T Float](s []T) []U {
	return unsafe.Slice((*U)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}
