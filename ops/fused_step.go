package ops

import (
	"math"
	"unsafe"

	"github.com/nabla-go/nabla/internal/kernel/fusedasm"
)

// fusedOpcode names what a step does and how it reads its operands, so
// that the kernel dispatches a step with one switch: the arithmetic ops on
// two vectors (VV), a vector and a scalar input (VS) or a scalar and a
// vector (SV), the cheap unary ops, the comparisons, and the general
// cases. The assembly kernel (internal/kernel/fusedasm) runs the opcodes up to
// fcEqual and knows their values.
type fusedOpcode uint8

// The arithmetic opcodes run in the order of addKind..divKind, so that
// fcAddVV+fusedOpcode(kind) is kind's opcode.
const (
	fcAddVV fusedOpcode = iota
	fcSubVV
	fcMulVV
	fcDivVV
	fcAddVS
	fcSubVS
	fcMulVS
	fcDivVS
	fcAddSV
	fcSubSV
	fcMulSV
	fcDivSV
	fcNeg
	fcSquare
	fcAbs
	fcSign
	fcScale
	fcReLU
	fcGreater // Greater, Less and Equal, on vectors or scalars
	fcLess
	fcEqual
	fcUnary  // any unary op: unaryLoop
	fcBinary // any binary op and strides: binaryLoop
	fcWhere  // whereLoop
)

// fusedCode is a step as the kernels run it: its opcode, the locations of
// its result and operands, and Scale's constant in both widths. It is
// small, so that a long expression's steps stay in the first-level cache,
// and its layout is fixed: the assembly reads it (see fusedCodeSize); the
// general opcodes read the step's fusedInstr.
type fusedCode struct {
	op      fusedOpcode
	dst     int32
	src     [3]int32
	scale32 float32
	scale   float64
	general *fusedInstr // for the Go kernel's general cases (binaryLoop, …)
}

// fusedCodeSize is fusedCode's size, which the assembly steps by.
const fusedCodeSize = fusedasm.RecordSize

// shortRun is the longest block the Go kernel (where the assembly does not
// run) computes with loops of its own: below it, the fixed cost of a call
// into vek's vector code (and of the calls leading to it) is more than the
// loop's work. Longer blocks, and divisions of any length, go to vek; both
// compute the same bits.
const shortRun = 32

// compileCode sets op.fast, the steps as fusedCode.
func (op *FusedOp) compileCode() {
	op.fast = make([]fusedCode, len(op.code))
	for j := range op.code {
		c := &op.code[j]
		f := fusedCode{op: fusedOpcodeOf(c), dst: int32(c.dst), general: c}
		for k := range c.src {
			f.src[k] = int32(c.src[k])
		}
		if c.kind == fusedUnary {
			f.scale, f.scale32 = c.unary.c, float32(c.unary.c)
		}
		op.fast[j] = f
	}
}

// fusedOpcodeOf picks the opcode of instruction c.
func fusedOpcodeOf(c *fusedInstr) fusedOpcode {
	switch c.kind {
	case fusedUnary:
		switch c.unary.kind {
		case negKind:
			return fcNeg
		case squareKind:
			return fcSquare
		case absKind:
			return fcAbs
		case reluKind:
			return fcReLU
		case signKind:
			return fcSign
		case scaleKind:
			return fcScale
		}
		return fcUnary
	case fusedBinary:
		if c.bin >= greaterKind && c.stride != [3]int{} {
			return fcGreater + fusedOpcode(c.bin-greaterKind)
		}
		if c.bin > divKind {
			return fcBinary
		}
		switch c.stride {
		case [3]int{1, 1}:
			return fcAddVV + fusedOpcode(c.bin)
		case [3]int{1, 0}:
			return fcAddVS + fusedOpcode(c.bin)
		case [3]int{0, 1}:
			return fcAddSV + fusedOpcode(c.bin)
		}
		return fcBinary
	}
	return fcWhere
}

// runSteps computes every step over one block of n elements, each
// location's first one in ptrs (a scalar input's first of n copies). The
// assembly kernel runs the steps it can, this loop the others.
func runSteps[T float](code []fusedCode, ptrs []unsafe.Pointer, n int) {
	for i := 0; i < len(code); i++ {
		if i += fusedStepsAsm[T](code[i:], ptrs, n); i == len(code) {
			break
		}
		runStep[T](&code[i], ptrs, n)
	}
}

// runStep computes step c over a block of n elements.
func runStep[T float](c *fusedCode, ptrs []unsafe.Pointer, n int) {
	short := n <= shortRun
	o, x := locSlice[T](ptrs, c.dst, n), locSlice[T](ptrs, c.src[0], n)
	switch c.op {
	case fcAddVV:
		if y := locSlice[T](ptrs, c.src[1], n); short {
			addVV(o, x, y)
		} else {
			arithVV(addKind, o, x, y)
		}
	case fcSubVV:
		if y := locSlice[T](ptrs, c.src[1], n); short {
			subVV(o, x, y)
		} else {
			arithVV(subKind, o, x, y)
		}
	case fcMulVV:
		if y := locSlice[T](ptrs, c.src[1], n); short {
			mulVV(o, x, y)
		} else {
			arithVV(mulKind, o, x, y)
		}
	case fcDivVV:
		arithVV(divKind, o, x, locSlice[T](ptrs, c.src[1], n))
	case fcAddVS:
		if y := *(*T)(ptrs[c.src[1]]); short {
			addVS(o, x, y)
		} else {
			arithVS(addKind, o, x, y)
		}
	case fcSubVS:
		if y := *(*T)(ptrs[c.src[1]]); short {
			subVS(o, x, y)
		} else {
			arithVS(subKind, o, x, y)
		}
	case fcMulVS:
		if y := *(*T)(ptrs[c.src[1]]); short {
			mulVS(o, x, y)
		} else {
			arithVS(mulKind, o, x, y)
		}
	case fcDivVS:
		arithVS(divKind, o, x, *(*T)(ptrs[c.src[1]]))
	case fcAddSV:
		if y := locSlice[T](ptrs, c.src[1], n); short {
			addSV(o, x[0], y)
		} else {
			arithSV(addKind, o, x[0], y)
		}
	case fcSubSV:
		if y := locSlice[T](ptrs, c.src[1], n); short {
			subSV(o, x[0], y)
		} else {
			arithSV(subKind, o, x[0], y)
		}
	case fcMulSV:
		if y := locSlice[T](ptrs, c.src[1], n); short {
			mulSV(o, x[0], y)
		} else {
			arithSV(mulKind, o, x[0], y)
		}
	case fcDivSV:
		arithSV(divKind, o, x[0], locSlice[T](ptrs, c.src[1], n))
	case fcNeg:
		if short {
			negLoop(o, x)
		} else {
			unaryLoop(unary{kind: negKind}, o, x)
		}
	case fcSquare:
		if short {
			mulVV(o, x, x)
		} else {
			unaryLoop(unary{kind: squareKind}, o, x)
		}
	case fcAbs:
		if short {
			absLoop(o, x)
		} else {
			unaryLoop(unary{kind: absKind}, o, x)
		}
	case fcReLU:
		if short {
			reluLoop(o, x)
		} else {
			unaryLoop(unary{kind: reluKind}, o, x)
		}
	case fcSign:
		signLoop(o, x)
	case fcScale:
		if short {
			mulVS(o, x, T(c.scale))
		} else {
			unaryLoop(unary{kind: scaleKind, c: c.scale}, o, x)
		}
	case fcUnary:
		unaryLoop(c.general.unary, o, x)
	case fcBinary, fcGreater, fcLess, fcEqual:
		g := c.general
		binaryLoop(g.bin, o, x, g.stride[0], locSlice[T](ptrs, c.src[1], n), g.stride[1])
	case fcWhere:
		g := c.general
		whereLoop(o, x, g.stride[0], locSlice[T](ptrs, c.src[1], n), g.stride[1], locSlice[T](ptrs, c.src[2], n), g.stride[2])
	}
}

// The loops below set o[i] for each i of o from operands at least as long
// as o, as vek's kernels do (bit for bit); o may be an operand.

func addVV[T float](o, x, y []T) {
	x, y = x[:len(o)], y[:len(o)]
	for i := range o {
		o[i] = x[i] + y[i]
	}
}

func subVV[T float](o, x, y []T) {
	x, y = x[:len(o)], y[:len(o)]
	for i := range o {
		o[i] = x[i] - y[i]
	}
}

func mulVV[T float](o, x, y []T) {
	x, y = x[:len(o)], y[:len(o)]
	for i := range o {
		o[i] = x[i] * y[i]
	}
}

func addVS[T float](o, x []T, c T) {
	x = x[:len(o)]
	for i := range o {
		o[i] = x[i] + c
	}
}

func subVS[T float](o, x []T, c T) {
	x = x[:len(o)]
	for i := range o {
		o[i] = x[i] - c
	}
}

func mulVS[T float](o, x []T, c T) {
	x = x[:len(o)]
	for i := range o {
		o[i] = x[i] * c
	}
}

func addSV[T float](o []T, c T, y []T) {
	y = y[:len(o)]
	for i := range o {
		o[i] = c + y[i]
	}
}

func mulSV[T float](o []T, c T, y []T) {
	y = y[:len(o)]
	for i := range o {
		o[i] = c * y[i]
	}
}

func subSV[T float](o []T, c T, y []T) {
	y = y[:len(o)]
	for i := range o {
		o[i] = c - y[i]
	}
}

func negLoop[T float](o, x []T) {
	x = x[:len(o)]
	for i := range o {
		o[i] = -x[i]
	}
}

func reluLoop[T float](o, x []T) {
	x = x[:len(o)]
	for i := range o {
		o[i] = max(x[i], 0)
	}
}

// absLoop clears the sign bits, in the element type (a float32 NaN keeps
// its payload, as in vek).
func absLoop[T float](o, x []T) {
	x = x[:len(o)]
	var z T
	if unsafe.Sizeof(z) == 4 {
		o32, x32 := sliceAs[float32](o), sliceAs[float32](x)
		for i := range o32 {
			o32[i] = math.Float32frombits(math.Float32bits(x32[i]) &^ (1 << 31))
		}
		return
	}
	o64, x64 := sliceAs[float64](o), sliceAs[float64](x)
	for i := range o64 {
		o64[i] = math.Abs(x64[i])
	}
}
