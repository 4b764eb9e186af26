package ops

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// castOp converts its input's elements to another dtype.
type castOp struct{ to tensor.Dtype }

// Cast returns x converted to dtype (float32, float64, int32 or int64);
// x itself when it has that dtype already. Floats become integers by
// truncation toward zero, as in PyTorch and Go; a NaN, an infinity or a
// value whose truncation the integer dtype cannot hold (an int64 beyond
// int32's range, say, but not -2147483648.9, which becomes int32's least
// value) makes the run fail with an error naming it, rather than giving whatever
// the hardware does. Between float dtypes the gradient is the output's
// gradient cast back; where either side is an integer there is none: an
// integer has no neighbouring values to differentiate through.
func Cast(x *graph.Node, dtype tensor.Dtype) *graph.Node {
	if p := poisoned("Cast", x); p != nil {
		return p
	}
	if !graph.IsSupported(dtype) {
		return failBuilder("Cast", fmt.Errorf("cannot cast to %s: the dtypes are float32, float64, int32 and int64", dtypeName(dtype)), x)
	}
	if x.DType() == dtype {
		return x
	}
	return graph.Apply(castOp{to: dtype}, x)
}

func (op castOp) Name() string { return "Cast" }

func (op castOp) Type(in []graph.Type) (graph.Type, error) {
	if err := graph.CheckArity(in, 1); err != nil {
		return graph.Type{}, err
	}
	return graph.TypeOf(op.to, in[0].Shape...), nil
}

func (op castOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	shape := in[0].Shape()
	switch op.to {
	case graph.Float32:
		return castTo(out.Float32s(), in[0], shape, op.to)
	case graph.Float64:
		return castTo(out.Float64s(), in[0], shape, op.to)
	case graph.Int32:
		return castTo(out.Int32s(), in[0], shape, op.to)
	case graph.Int64:
		return castTo(out.Int64s(), in[0], shape, op.to)
	}
	return fmt.Errorf("cannot cast to %v", op.to)
}

// Backward casts a float gradient back to the input's float dtype; integers
// on either side get none.
func (op castOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	from := ctx.Input(0).DType()
	if !ctx.NeedsGrad(0) || !graph.IsFloat(from) || !graph.IsFloat(op.to) {
		return []*graph.Node{nil}
	}
	return []*graph.Node{Cast(g, from)}
}

// JVP casts a float tangent; integers on either side have none.
func (op castOp) JVP(c *graph.JVPContext) *graph.Node {
	t := c.Tangent(0)
	if t == nil || !graph.IsFloat(c.Input(0).DType()) || !graph.IsFloat(op.to) {
		return nil
	}
	return Cast(t, op.to)
}

// Batch casts the batch.
func (op castOp) Batch(c *graph.BatchContext) *graph.Node { return elementwiseBatch(c, op) }

// number is every element type a node may hold.
type number interface {
	~float32 | ~float64 | ~int32 | ~int64
}

// castTo converts src's elements into dst, of dtype to.
func castTo[D number](dst []D, src *tensor.Dense, shape []int, to tensor.Dtype) error {
	switch src.Dtype() {
	case graph.Float32:
		return castSlice(dst, src.Float32s(), shape, to)
	case graph.Float64:
		return castSlice(dst, src.Float64s(), shape, to)
	case graph.Int32:
		return castSlice(dst, src.Int32s(), shape, to)
	case graph.Int64:
		return castSlice(dst, src.Int64s(), shape, to)
	}
	return fmt.Errorf("cannot cast from %v", src.Dtype())
}

// castSlice converts src into dst, of dtype to, checking that each value
// is in range when to is an integer dtype.
func castSlice[D, S number](dst []D, src []S, shape []int, to tensor.Dtype) error {
	bound, check := integerBound(to)
	for i, v := range src {
		if check && !truncFits(float64(v), bound) {
			return fmt.Errorf("value %v at position %s is out of %v's range", v, position(i, shape), to)
		}
		dst[i] = D(v)
	}
	return nil
}

// truncFits reports whether f truncated toward zero lies in [-bound,
// bound), as the conversion to an integer dtype needs: -2147483648.9
// becomes int32's least value. The bounds are powers of two and f and its
// truncation are exact in float64 (every float32 and every int64 near
// int32's bounds is), so the comparisons are exact; NaN fails them, an
// infinity stays one.
func truncFits(f, bound float64) bool {
	t := math.Trunc(f)
	return t >= -bound && t < bound
}

// integerBound returns 2^(bits-1) for an integer dtype, whose values are
// [-bound, bound), and false for a float dtype.
func integerBound(dtype tensor.Dtype) (bound float64, ok bool) {
	switch dtype {
	case graph.Int32:
		return math.Ldexp(1, 31), true
	case graph.Int64:
		return math.Ldexp(1, 63), true
	}
	return 0, false
}
