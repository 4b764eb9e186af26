package ops

import (
	"fmt"
	"math"
	"unsafe"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vek"
	"github.com/nabla-go/nabla/internal/kernel/vmath"
)

// unaryKind selects an elementwise unary op.
type unaryKind uint8

const (
	negKind unaryKind = iota
	expKind
	logKind
	log1pKind
	sqrtKind
	squareKind
	absKind
	signKind
	sinKind
	cosKind
	tanhKind
	sigmoidKind
	reluKind
	softplusKind
	powConstKind
	scaleKind
	erfKind
	geluKind
	geluTanhKind
	siluKind
)

// unaryDef is one row of the unary table: the op's name, its scalar
// function (c is the op's constant, for PowConst and Scale) and its
// gradient given the input x, the output y and the output's gradient g.
type unaryDef struct {
	name string
	f    func(x, c float64) float64
	grad func(x, y, g *graph.Node, c float64) *graph.Node
}

var unaryDefs = [...]unaryDef{
	negKind: {"Neg", func(x, _ float64) float64 { return -x },
		func(_, _, g *graph.Node, _ float64) *graph.Node { return Neg(g) }},
	expKind: {"Exp", func(x, _ float64) float64 { return math.Exp(x) },
		func(_, y, g *graph.Node, _ float64) *graph.Node { return Mul(g, y) }},
	logKind: {"Log", func(x, _ float64) float64 { return math.Log(x) },
		func(x, _, g *graph.Node, _ float64) *graph.Node { return Div(g, x) }},
	log1pKind: {"Log1p", func(x, _ float64) float64 { return math.Log1p(x) },
		func(x, _, g *graph.Node, _ float64) *graph.Node { return Div(g, Add(x, scalarLike(x, 1))) }},
	sqrtKind: {"Sqrt", func(x, _ float64) float64 { return math.Sqrt(x) },
		func(_, y, g *graph.Node, _ float64) *graph.Node { return Div(g, Scale(y, 2)) }},
	squareKind: {"Square", func(x, _ float64) float64 { return x * x },
		func(x, _, g *graph.Node, _ float64) *graph.Node { return Mul(g, Scale(x, 2)) }},
	absKind: {"Abs", func(x, _ float64) float64 { return math.Abs(x) },
		func(x, _, g *graph.Node, _ float64) *graph.Node { return Mul(g, Sign(x)) }},
	signKind: {"Sign", sign, nil},
	sinKind: {"Sin", func(x, _ float64) float64 { return math.Sin(x) },
		func(x, _, g *graph.Node, _ float64) *graph.Node { return Mul(g, Cos(x)) }},
	cosKind: {"Cos", func(x, _ float64) float64 { return math.Cos(x) },
		func(x, _, g *graph.Node, _ float64) *graph.Node { return Neg(Mul(g, Sin(x))) }},
	tanhKind: {"Tanh", func(x, _ float64) float64 { return math.Tanh(x) },
		func(_, y, g *graph.Node, _ float64) *graph.Node {
			return Mul(g, Sub(scalarLike(y, 1), Square(y))) // 1 - tanh²
		}},
	sigmoidKind: {"Sigmoid", sigmoid,
		func(_, y, g *graph.Node, _ float64) *graph.Node {
			return Mul(g, Mul(y, Sub(scalarLike(y, 1), y))) // σ(1-σ)
		}},
	reluKind: {"ReLU", func(x, _ float64) float64 { return max(x, 0) },
		func(x, _, g *graph.Node, _ float64) *graph.Node { return Mul(g, Greater(x, scalarLike(x, 0))) }},
	softplusKind: {"Softplus", softplus,
		func(x, _, g *graph.Node, _ float64) *graph.Node { return Mul(g, Sigmoid(x)) }},
	powConstKind: {"PowConst", math.Pow, powConstGrad},
	scaleKind: {"Scale", func(x, c float64) float64 { return x * c },
		func(_, _, g *graph.Node, c float64) *graph.Node { return Scale(g, c) }},
	erfKind:      {"Erf", func(x, _ float64) float64 { return math.Erf(x) }, erfGrad},
	geluKind:     {"GELU", gelu, geluGrad},
	geluTanhKind: {"GELUTanh", geluTanh, geluTanhGrad},
	siluKind:     {"SiLU", silu, siluGrad},
}

// powConstGrad is c·x^(c-1)·g, and zero for c = 0 (as in PyTorch), where
// the formula gives 0·∞ at x = 0.
func powConstGrad(x, _, g *graph.Node, c float64) *graph.Node {
	if c == 0 {
		return BroadcastTo(scalarLike(x, 0), x.Shape()...)
	}
	return Mul(g, Scale(PowConst(x, c-1), c))
}

func sign(x, _ float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x // keeps 0, -0 and NaN
}

// sigmoid is 1/(1+e^-x), computed without overflow for large |x|.
func sigmoid(x, _ float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// softplus is log(1+e^x) = max(x,0) + log1p(e^-|x|), stable for large |x|.
func softplus(x, _ float64) float64 { return max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }

// unary is every elementwise unary op; c is the constant of PowConst and
// Scale (0 for the others), so ops with different constants never merge.
type unary struct {
	kind unaryKind
	c    float64
}

// Neg returns -x.
func Neg(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: negKind}, x) }

// Exp returns e^x elementwise.
func Exp(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: expKind}, x) }

// Log returns the natural logarithm of x elementwise.
func Log(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: logKind}, x) }

// Log1p returns log(1+x) elementwise, accurate for small x.
func Log1p(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: log1pKind}, x) }

// Sqrt returns the square root of x elementwise.
func Sqrt(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: sqrtKind}, x) }

// Square returns x² elementwise.
func Square(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: squareKind}, x) }

// Abs returns |x| elementwise; its gradient at 0 is 0.
func Abs(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: absKind}, x) }

// Sign returns -1, 0 or 1 by the sign of x. Its gradient is zero: it has
// none.
func Sign(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: signKind}, x) }

// Sin returns sin(x) elementwise.
func Sin(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: sinKind}, x) }

// Cos returns cos(x) elementwise.
func Cos(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: cosKind}, x) }

// Tanh returns tanh(x) elementwise.
func Tanh(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: tanhKind}, x) }

// Sigmoid returns 1/(1+e^-x) elementwise.
func Sigmoid(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: sigmoidKind}, x) }

// ReLU returns max(x, 0) elementwise; its gradient at 0 is 0.
func ReLU(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: reluKind}, x) }

// Softplus returns log(1+e^x) elementwise, without overflow.
func Softplus(x *graph.Node) *graph.Node { return graph.Apply(unary{kind: softplusKind}, x) }

// PowConst returns x^c elementwise for a constant exponent c.
func PowConst(x *graph.Node, c float64) *graph.Node {
	return graph.Apply(unary{kind: powConstKind, c: c}, x)
}

// Scale returns x·c for a constant c.
func Scale(x *graph.Node, c float64) *graph.Node {
	return graph.Apply(unary{kind: scaleKind, c: c}, x)
}

func (op unary) Name() string { return unaryDefs[op.kind].name }

func (op unary) Type(in []graph.Type) (graph.Type, error) { return singleInput(in) }

// Cost is one flop per output element.
func (unary) Cost(in []graph.Type, out graph.Type) graph.Cost { return elementwiseCost(in, out) }

func (op unary) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return forFloat(out.Dtype(),
		func() error { unaryForward[float32](op, out, in[0]); return nil },
		func() error { unaryForward[float64](op, out, in[0]); return nil })
}

func unaryForward[T float](op unary, out, in *tensor.Dense) {
	unaryLoop(op, floats[T](out), floats[T](in))
}

// unaryLoop sets o[i] = op(x[i]) for each i of o; o may be x. Kernels that
// apply a unary op to a block of elements (fused expressions) call it too.
func unaryLoop[T float](op unary, o, x []T) {
	x = x[:len(o)]
	switch op.kind { // the cheapest ops run in vek, several elements per instruction
	case negKind:
		vek.Unary(vek.Neg, o, x)
	case squareKind:
		vek.Unary(vek.Square, o, x)
	case scaleKind:
		vek.Scale(o, x, T(op.c))
	case absKind:
		vek.Unary(vek.Abs, o, x)
	case sqrtKind: // through float64, float32 still rounds once
		vek.Unary(vek.Sqrt, o, x)
	case reluKind:
		vek.Unary(vek.ReLU, o, x)
	case expKind, logKind, tanhKind, sigmoidKind, softplusKind, erfKind, geluKind:
		vmathLoop(op.kind, o, x)
	case signKind:
		signLoop(o, x)
	default:
		f := unaryDefs[op.kind].f
		if unsafe.Sizeof(x[0]) == 8 {
			for i, v := range x {
				o[i] = T(f(float64(v), op.c))
			}
			return
		}
		// float32 goes through float64 a block at a time (see widen), so
		// that f's calls run in a loop of their own.
		var buf [wideBlock]float64
		for start := 0; start < len(x); start += wideBlock {
			b := widen(buf[:min(wideBlock, len(x)-start)], x[start:], 1)
			for i, v := range b {
				b[i] = f(v, op.c)
			}
			for i, v := range b {
				o[start+i] = T(v)
			}
		}
	}
}

// signLoop sets o[i] = sign(x[i]), as sign does, without a call per
// element; len(x) is len(o).
func signLoop[T float](o, x []T) {
	x = x[:len(o)]
	for i, v := range x {
		switch {
		case v > 0:
			o[i] = 1
		case v < 0:
			o[i] = -1
		default:
			o[i] = v
		}
	}
}

// vmathKernels are the slice kernels of the unary ops that vmath
// computes, several elements at a time; they agree with the table's
// scalar functions to within 2 ulp (float64) and 1 ulp (float32).
var vmathKernels = [...]struct {
	f64 func(dst, src []float64)
	f32 func(dst, src []float32)
}{
	expKind:      {vmath.Exp64, vmath.Exp32},
	logKind:      {vmath.Log64, vmath.Log32},
	tanhKind:     {vmath.Tanh64, vmath.Tanh32},
	sigmoidKind:  {vmath.Sigmoid64, vmath.Sigmoid32},
	softplusKind: {vmath.Softplus64, vmath.Softplus32},
	erfKind:      {vmath.Erf64, vmath.Erf32},
	geluKind:     {vmath.GELU64, vmath.GELU32},
}

// vmathLoop sets o[i] = op(x[i]) with vmath's kernel for kind; len(x) is
// len(o).
func vmathLoop[T float](kind unaryKind, o, x []T) {
	k := vmathKernels[kind]
	if unsafe.Sizeof(x[0]) == 8 {
		k.f64(sliceAs[float64](o), sliceAs[float64](x))
		return
	}
	k.f32(sliceAs[float32](o), sliceAs[float32](x))
}

// InPlace lets the output overwrite the input: each element is read
// before it is written.
func (unary) InPlace() int { return 0 }

func (op unary) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	grad := unaryDefs[op.kind].grad
	if grad == nil {
		return []*graph.Node{nil}
	}
	return []*graph.Node{grad(ctx.Input(0), ctx.Output(), g, op.c)}
}

// JVP applies the derivative to the tangent: an elementwise op's Jacobian
// is diagonal, so its gradient rule, linear in g, is its tangent rule.
func (op unary) JVP(c *graph.JVPContext) *graph.Node {
	grad, t := unaryDefs[op.kind].grad, c.Tangent(0)
	if grad == nil || t == nil {
		return nil
	}
	return grad(c.Input(0), c.Output(), t, op.c)
}

// Batch applies the op to the batch: it is elementwise.
func (op unary) Batch(c *graph.BatchContext) *graph.Node { return elementwiseBatch(c, op) }

// DotLabel shows the constant of PowConst and Scale in DOT.
func (op unary) DotLabel() string {
	if op.kind == powConstKind || op.kind == scaleKind {
		return fmt.Sprintf("%s(%g)", op.Name(), op.c)
	}
	return op.Name()
}
