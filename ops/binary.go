package ops

import (
	"math"
	"unsafe"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vek"
)

// binaryKind selects an elementwise binary op; binary ops broadcast their
// inputs the NumPy way.
type binaryKind uint8

const (
	addKind binaryKind = iota
	subKind
	mulKind
	divKind
	powKind
	maximumKind
	minimumKind
	greaterKind
	lessKind
	equalKind
)

var binaryNames = [...]string{"Add", "Sub", "Mul", "Div", "Pow", "Maximum", "Minimum", "Greater", "Less", "Equal"}

// binary is every elementwise binary op; its kind is its only parameter.
type binary struct{ kind binaryKind }

// Add returns a + b, broadcasting.
func Add(a, b *graph.Node) *graph.Node { return graph.Apply(binary{addKind}, a, b) }

// Sub returns a - b, broadcasting.
func Sub(a, b *graph.Node) *graph.Node { return graph.Apply(binary{subKind}, a, b) }

// Mul returns a * b elementwise, broadcasting.
func Mul(a, b *graph.Node) *graph.Node { return graph.Apply(binary{mulKind}, a, b) }

// Div returns a / b elementwise, broadcasting.
func Div(a, b *graph.Node) *graph.Node { return graph.Apply(binary{divKind}, a, b) }

// Pow returns a raised to the power b elementwise, broadcasting. Its
// gradient with respect to b involves log(a), so is defined for a > 0.
func Pow(a, b *graph.Node) *graph.Node { return graph.Apply(binary{powKind}, a, b) }

// Maximum returns the elementwise larger of a and b, broadcasting. Where they
// tie, the gradient is shared equally.
func Maximum(a, b *graph.Node) *graph.Node { return graph.Apply(binary{maximumKind}, a, b) }

// Minimum returns the elementwise smaller of a and b, broadcasting. Where they
// tie, the gradient is shared equally.
func Minimum(a, b *graph.Node) *graph.Node { return graph.Apply(binary{minimumKind}, a, b) }

// Greater returns 1 where a > b and 0 elsewhere, broadcasting. A mask has no
// gradient.
func Greater(a, b *graph.Node) *graph.Node { return graph.Apply(binary{greaterKind}, a, b) }

// Less returns 1 where a < b and 0 elsewhere, broadcasting. A mask has no
// gradient.
func Less(a, b *graph.Node) *graph.Node { return graph.Apply(binary{lessKind}, a, b) }

// Equal returns 1 where a == b and 0 elsewhere, broadcasting. A mask has no
// gradient.
func Equal(a, b *graph.Node) *graph.Node { return graph.Apply(binary{equalKind}, a, b) }

func (op binary) Name() string { return binaryNames[op.kind] }

// Broadcasts marks binary ops as broadcasting their inputs (graph.Broadcaster).
func (binary) Broadcasts() {}

func (op binary) Type(in []graph.Type) (graph.Type, error) { return broadcastType(in, 2) }

// Cost is one flop per output element.
func (binary) Cost(in []graph.Type, out graph.Type) graph.Cost { return elementwiseCost(in, out) }

// broadcastType checks n inputs of one dtype whose shapes broadcast together
// and returns the broadcast type.
func broadcastType(in []graph.Type, n int) (graph.Type, error) {
	dtype, err := graph.CheckInputs(in, n)
	if err != nil {
		return graph.Type{}, err
	}
	if err := checkRank(in); err != nil {
		return graph.Type{}, err
	}
	shapes := make([][]int, n)
	for i, t := range in {
		shapes[i] = t.Shape
	}
	shape, err := graph.BroadcastShapes(shapes...)
	if err != nil {
		return graph.Type{}, err
	}
	return graph.TypeOf(dtype, shape...), nil
}

func (op binary) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return forFloat(out.Dtype(),
		func() error { binaryForward[float32](op.kind, out, in[0], in[1]); return nil },
		func() error { binaryForward[float64](op.kind, out, in[0], in[1]); return nil })
}

func binaryForward[T float](k binaryKind, out, a, b *tensor.Dense) {
	o, x, y := floats[T](out), floats[T](a), floats[T](b)
	switch {
	case len(x) == len(o) && len(y) == len(o): // same shape up to leading 1s
		binaryLoop(k, o, x, 1, y, 1)
	case len(x) == len(o) && len(y) == 1:
		binaryLoop(k, o, x, 1, y, 0)
	case len(x) == 1 && len(y) == len(o):
		binaryLoop(k, o, x, 0, y, 1)
	default:
		w := newElementwiseWalker(out.Shape(), a.Shape(), b.Shape())
		w.rows(func(off, n int, in [3]int) {
			binaryLoop(k, o[off:off+n], x[in[0]:], w.inner[0], y[in[1]:], w.inner[1])
		})
	}
}

// binaryLoop computes o[i] = x[i*sx] op y[i*sy]; strides are 0 or 1.
func binaryLoop[T float](k binaryKind, o, x []T, sx int, y []T, sy int) {
	if k <= divKind && len(o) > 0 {
		// Arithmetic on whole vectors, or with a scalar, runs in vek,
		// several elements per instruction.
		switch {
		case sx == 1 && sy == 1:
			arithVV(k, o, x[:len(o)], y[:len(o)])
			return
		case sx == 1 && sy == 0:
			arithVS(k, o, x[:len(o)], y[0])
			return
		case sx == 0 && sy == 1:
			arithSV(k, o, x[0], y[:len(o)])
			return
		}
	}
	switch k {
	case addKind:
		for i := range o {
			o[i] = x[i*sx] + y[i*sy]
		}
	case subKind:
		for i := range o {
			o[i] = x[i*sx] - y[i*sy]
		}
	case mulKind:
		for i := range o {
			o[i] = x[i*sx] * y[i*sy]
		}
	case divKind:
		for i := range o {
			o[i] = x[i*sx] / y[i*sy]
		}
	case powKind:
		if unsafe.Sizeof(o[0]) == 8 {
			for i := range o {
				o[i] = T(math.Pow(float64(x[i*sx]), float64(y[i*sy])))
			}
			return
		}
		// float32 goes through float64 a block at a time (see widen).
		var xb, yb [wideBlock]float64
		for start := 0; start < len(o); start += wideBlock {
			n := min(wideBlock, len(o)-start)
			a, b := widen(xb[:n], x[start*sx:], sx), widen(yb[:n], y[start*sy:], sy)
			for i := range a {
				a[i] = math.Pow(a[i], b[i])
			}
			for i, v := range a {
				o[start+i] = T(v)
			}
		}
	case maximumKind:
		for i := range o {
			o[i] = max(x[i*sx], y[i*sy])
		}
	case minimumKind:
		for i := range o {
			o[i] = min(x[i*sx], y[i*sy])
		}
	case greaterKind:
		for i := range o {
			o[i] = mask[T](x[i*sx] > y[i*sy])
		}
	case lessKind:
		for i := range o {
			o[i] = mask[T](x[i*sx] < y[i*sy])
		}
	case equalKind:
		for i := range o {
			o[i] = mask[T](x[i*sx] == y[i*sy])
		}
	}
}

// arithVV sets o[i] = x[i] op y[i] for the arithmetic kinds; x and y
// have o's length. vek runs it several elements per instruction, with the
// Go loop's results bit for bit.
func arithVV[T float](k binaryKind, o, x, y []T) { vek.VV(vekOps[k], o, x, y) }

// arithVS sets o[i] = x[i] op c for the arithmetic kinds.
func arithVS[T float](k binaryKind, o, x []T, c T) { vek.VS(vekOps[k], o, x, c) }

// arithSV sets o[i] = c op y[i] for the arithmetic kinds.
func arithSV[T float](k binaryKind, o []T, c T, y []T) { vek.SV(vekOps[k], o, c, y) }

// vekOps are the arithmetic kinds' operations in vek.
var vekOps = [...]vek.Op{addKind: vek.Add, subKind: vek.Sub, mulKind: vek.Mul, divKind: vek.Div}

// mask is 1 for true and 0 for false, without a branch: a comparison's
// outcome on data is as good as random.
func mask[T float](b bool) T { return T(b2i(b)) }

// InPlace lets the output overwrite the first input where they have the
// same shape: each element is read before it is written. In gradients the
// first input is usually the incoming gradient, which dies there.
func (binary) InPlace() int { return 0 }

// Backward gives each input's gradient in the output's shape; the driver
// sums broadcast axes away.
func (op binary) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	a, b, y := ctx.Input(0), ctx.Input(1), ctx.Output()
	switch op.kind {
	case addKind:
		return []*graph.Node{g, g}
	case subKind:
		return []*graph.Node{g, Neg(g)}
	case mulKind:
		return []*graph.Node{Mul(g, b), Mul(g, a)}
	case divKind:
		// d(a/b)/db = -a/b² = -y/b
		return []*graph.Node{Div(g, b), Neg(Div(Mul(g, y), b))}
	case powKind:
		// As PyTorch defines them where the formulas give 0·∞: no
		// gradient for a where b is 0, nor for b where a is 0 and b ≥ 0.
		grads := make([]*graph.Node, 2)
		if ctx.NeedsGrad(0) {
			grads[0] = powGradBase(a, b, g)
		}
		if ctx.NeedsGrad(1) {
			grads[1] = powGradExponent(a, b, y, g)
		}
		return grads
	case maximumKind, minimumKind:
		// The winner takes the gradient; a tie shares it.
		wins := Greater(a, b)
		if op.kind == minimumKind {
			wins = Less(a, b)
		}
		share := Add(wins, Scale(Equal(a, b), 0.5))
		return []*graph.Node{Mul(g, share), Mul(g, Sub(scalarLike(share, 1), share))}
	}
	return []*graph.Node{nil, nil} // masks: no gradient
}

// JVP is the sum of each operand's elementwise derivative times its
// tangent (the tangents aligned for broadcasting).
func (op binary) JVP(c *graph.JVPContext) *graph.Node {
	a, b, y := c.Input(0), c.Input(1), c.Output()
	ta, tb := aligned(c, 0), aligned(c, 1)
	switch op.kind {
	case addKind:
		return addTangents(ta, tb)
	case subKind:
		if tb == nil {
			return ta
		}
		return addTangents(ta, Neg(tb))
	case mulKind:
		return addTangents(times(ta, b), times(tb, a))
	case divKind:
		var da, db *graph.Node // d(a/b) = (da - y·db)/b
		if ta != nil {
			da = Div(ta, b)
		}
		if tb != nil {
			db = Neg(Div(Mul(tb, y), b))
		}
		return addTangents(da, db)
	case maximumKind, minimumKind:
		wins := Greater(a, b)
		if op.kind == minimumKind {
			wins = Less(a, b)
		}
		share := Add(wins, Scale(Equal(a, b), 0.5))
		return addTangents(times(ta, share), times(tb, Sub(scalarLike(share, 1), share)))
	case powKind:
		var da, db *graph.Node
		if ta != nil {
			da = powGradBase(a, b, ta)
		}
		if tb != nil {
			db = powGradExponent(a, b, y, tb)
		}
		return addTangents(da, db)
	}
	return nil // masks have no derivative
}

// Batch applies the op to the batch, the operands aligned so that the
// batch axis broadcasts only against the other's.
func (op binary) Batch(c *graph.BatchContext) *graph.Node { return elementwiseBatch(c, op) }

// powGradBase is g·∂(a^b)/∂a = g·b·a^(b-1), and 0 where b is 0.
func powGradBase(a, b, g *graph.Node) *graph.Node {
	zero := scalarLike(g, 0)
	return Where(Equal(b, zero), zero, Mul(g, Mul(b, Pow(a, Sub(b, scalarLike(b, 1))))))
}

// powGradExponent is g·∂(a^b)/∂b = g·y·log(a) (y = a^b), and 0 where a
// is 0 and b ≥ 0.
func powGradExponent(a, b, y, g *graph.Node) *graph.Node {
	zero := scalarLike(g, 0)
	flat := Mul(Equal(a, zero), Sub(scalarLike(b, 1), Less(b, zero)))
	return Where(flat, zero, Mul(g, Mul(y, Log(a))))
}

// scalarLike returns a scalar constant of x's dtype in x's graph.
func scalarLike(x *graph.Node, v float64) *graph.Node {
	if p := graph.Poisoned(x); p != nil {
		return p
	}
	return x.Graph().Scalar(v, x.DType())
}
