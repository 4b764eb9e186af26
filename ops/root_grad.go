package ops

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// rootOp passes the solve's result through, and differentiates it by the
// implicit function theorem. Its inputs are the solve's result xs, the
// node xp standing for it in F's graph at the solution, that graph's
// output F(xp), and the nodes that graph reads besides xp (θ); only θ
// gets a gradient. The derivatives build F's graph again from F, the
// template of that graph, at the op's output and from its θ inputs as
// they are where the op is (Vmap may have applied it again, in a loop
// over the examples), in the matrix-free solve's loop body too.
type rootOp struct {
	name, fn   string // the builder (Root, FixedPoint) and F's name in it (F, T)
	F          rootTemplate
	matrixFree bool
}

// rootParams is the index of rootOp's first θ input.
const rootParams = 3

func (op *rootOp) Name() string { return op.name }

func (op *rootOp) Type(in []graph.Type) (graph.Type, error) {
	if len(in) < rootParams {
		return graph.Type{}, fmt.Errorf("%d inputs: want the solution, its stand-in, F there and F's parameters", len(in))
	}
	return in[0], nil
}

func (*rootOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return copyForward(out, in[0])
}

// Retype keeps the op for new inputs (graph.Replay: a vm.Runner at
// another batch size, a Checkpoint computing it again): its derivatives
// build F from its template with the parameters it is given, whichever
// way they solve.
func (op *rootOp) Retype([]graph.Type, []bool) (any, error) { return op, nil }

// Backward solves (∂F/∂x)ᵀλ = gOut at x* and returns −(∂F/∂θ)ᵀλ for
// each parameter θ.
func (op *rootOp) Backward(ctx *graph.GradContext, gOut *graph.Node) []*graph.Node {
	in := ctx.Inputs()
	out := make([]*graph.Node, len(in))
	var wanted []int
	for i := rootParams; i < len(in); i++ {
		if ctx.NeedsGrad(i) && graph.IsFloat(in[i].DType()) {
			wanted = append(wanted, i)
		}
	}
	if gOut == nil || len(wanted) == 0 {
		return out
	}
	x := ctx.Output()
	if x.Type().Size() == 0 { // no element depends on anything
		for _, i := range wanted {
			out[i] = ctx.Graph().Const(graph.NewDenseOf(in[i].Type()))
		}
		return out
	}
	fx, params, err := op.linearise(x, in)
	if err != nil {
		ctx.Errorf("%v", err)
		return nil
	}
	var lambda *graph.Node
	if op.matrixFree {
		lambda, err = op.transposedSolve(ctx, x, gOut, in[rootParams:])
	} else {
		lambda, err = op.denseTransposedSolve(ctx, fx, x, gOut)
	}
	if err != nil {
		ctx.Errorf("%w", err)
		return nil
	}
	wrt := make([]*graph.Node, len(wanted))
	for k, i := range wanted {
		wrt[k] = params[i-rootParams]
	}
	grads, err := ctx.Differentiate([]*graph.Node{fx}, []*graph.Node{Neg(lambda)}, wrt)
	if err != nil {
		ctx.Errorf("%w", op.differentiating(err))
		return nil
	}
	for k, i := range wanted {
		out[i] = grads[k]
	}
	return out
}

// TangentFree says that the tangent of the op's output ignores those of
// the solve's result, of its stand-in and of F there: forward mode does
// not differentiate the solve (which need not be differentiable) or F
// at the stand-in, only F built again at the output (see JVP).
func (*rootOp) TangentFree(i int) bool { return i < rootParams }

// JVP solves ∂F/∂x·t = −∂F/∂θ·dθ at x*, with ∂F/∂x formed from its
// columns. Batched tangents, an x of no elements and the matrix-free
// solve are declined, the driver deriving them from Backward, once F's
// tangents are known to build. F without a derivative is the op's error
// ("differentiating F: …").
func (op *rootOp) JVP(ctx *graph.JVPContext) *graph.Node {
	in := ctx.Inputs()
	var moved []int // the parameters with a tangent
	for i := rootParams; i < len(in); i++ {
		if ctx.Tangent(i) != nil && graph.IsFloat(in[i].DType()) {
			moved = append(moved, i)
		}
	}
	if len(moved) == 0 {
		return nil
	}
	x := ctx.Output()
	fx, params, err := op.linearise(x, in)
	if err != nil {
		ctx.Errorf("%v", err)
		return nil
	}
	sweep := func(from, dir []*graph.Node) (*graph.Node, error) {
		r, err := ctx.Sweep([]*graph.Node{fx}, from, dir)
		if err != nil {
			return nil, op.differentiating(untold(err))
		}
		return r[0], nil
	}
	xs, ts := make([]*graph.Node, len(moved)), make([]*graph.Node, len(moved))
	for k, i := range moved {
		xs[k], ts[k] = params[i-rootParams], ctx.Tangent(i)
	}
	n := x.Type().Size()
	if ctx.Batch() > 0 || op.matrixFree || n == 0 {
		// F's tangent along x too, unused: its error is F's.
		zero := ctx.Graph().Const(graph.NewDenseOf(graph.TypeOf(x.DType(), ctx.Shape(x.Shape())...)))
		if _, err := sweep(append([]*graph.Node{x}, xs...), append([]*graph.Node{zero}, ts...)); err != nil {
			ctx.Errorf("%w", err)
			return nil
		}
		ctx.Decline()
		return nil
	}
	rhs, err := sweep(xs, ts)
	if err != nil {
		ctx.Errorf("%w", err)
		return nil
	}
	// Column j of ∂F/∂x is F's tangent along unit vector j.
	cols, err := rootJacobian(x, func(e *graph.Node) (*graph.Node, error) { return sweep([]*graph.Node{x}, []*graph.Node{e}) })
	if err != nil {
		ctx.Errorf("%w", err)
		return nil
	}
	return Neg(Reshape(graph.Apply(SolveOp(true, false), cols, Reshape(rhs, n, 1)), x.Shape()...))
}

// untold is err, the forward-mode driver's error for a nested sweep, less
// the driver's name and the caller's line, which the driver's own error
// for the op gives.
func untold(err error) error {
	if gerr, ok := err.(*graph.Error); ok && gerr.Err != nil {
		return gerr.Err
	}
	return err
}

// linearise builds F again at the solution x (the op's output) from the
// op's inputs in: F's graph (op.F) with x for its stand-in, and with a
// node of its own for each parameter, so that each is differentiated
// apart from the others (a parameter may be computed from another) and
// from x (which depends on them all through the op).
func (op *rootOp) linearise(x *graph.Node, in []*graph.Node) (fx *graph.Node, params []*graph.Node, err error) {
	own := map[*graph.Node]*graph.Node{}
	params = make([]*graph.Node, len(in)-rootParams)
	for k, p := range in[rootParams:] {
		if params[k] = own[p]; params[k] == nil {
			params[k] = Identity(p)
			own[p] = params[k]
		}
	}
	if fx, err = op.F.at(x.Graph(), x, params); err != nil {
		return nil, nil, err
	}
	return fx, params, nil
}

// differentiating is err, an error differentiating F, as the op's
// Backward tells it ("differentiating T: Gradients: op … is not
// differentiable …").
func (op *rootOp) differentiating(err error) error {
	return fmt.Errorf("differentiating %s: %w", op.fn, traced(err))
}

// denseTransposedSolve solves (∂F/∂x)ᵀλ = gOut, ∂F/∂x formed from its
// rows, the gradients of fx's elements with respect to x.
func (op *rootOp) denseTransposedSolve(ctx *graph.GradContext, fx, x, gOut *graph.Node) (*graph.Node, error) {
	jac, err := rootJacobian(x, func(e *graph.Node) (*graph.Node, error) {
		r, err := ctx.Differentiate([]*graph.Node{fx}, []*graph.Node{e}, []*graph.Node{x})
		if err != nil {
			return nil, err
		}
		return r[0], nil
	})
	if err != nil {
		return nil, op.differentiating(err)
	}
	n := x.Type().Size()
	return Reshape(graph.Apply(SolveOp(true, false), jac, Reshape(gOut, n, 1)), x.Shape()...), nil
}

// rootJacobian stacks product(e_i) for every unit vector e_i of x's
// type, each flattened to a row: an (n, n) matrix.
func rootJacobian(x *graph.Node, product func(e *graph.Node) (*graph.Node, error)) (*graph.Node, error) {
	n := x.Type().Size()
	rows := make([]*graph.Node, n)
	for i := range rows {
		e := graph.NewDenseOf(x.Type())
		graph.SetFloat(e, i, 1)
		r, err := product(x.Graph().Const(e))
		if err != nil {
			return nil, err
		}
		rows[i] = Reshape(r, 1, n)
	}
	if n == 1 {
		return rows[0], nil
	}
	return Concat(0, rows...), nil
}

// transposedSolve solves (∂F/∂x)ᵀλ = gOut matrix-free: λ is the root of
// u ↦ (∂F/∂x)ᵀu − gOut, found by normalCG, and differentiated as a Root
// in its turn. (∂F/∂x)ᵀu is a vector–Jacobian product of F built again
// in u's graph, at x. What fails is the op's error, left off the graph
// (the gradient's caller records it); one differentiating F names F.
func (op *rootOp) transposedSolve(ctx *graph.GradContext, x, gOut *graph.Node, params []*graph.Node) (*graph.Node, error) {
	var diffErr error // the first error differentiating F
	residual := func(u *graph.Node) *graph.Node {
		g := u.Graph()
		at := g.Capture(x)
		fat, err := op.F.at(g, at, params)
		var vjp []*graph.Node
		if err == nil {
			vjp, err = ctx.Differentiate([]*graph.Node{fat}, []*graph.Node{u}, []*graph.Node{at})
		}
		if err != nil {
			if diffErr == nil {
				diffErr = err
			}
			return g.Fail(err)
		}
		return Sub(vjp[0], gOut)
	}
	g := x.Graph()
	zero := g.Const(graph.NewDenseOf(x.Type()))
	var lambda *graph.Node
	call := rootCall{name: op.name, fn: "the transposed system", solve: "conjugate gradients", own: true}
	err := g.Catch(func() { lambda = root(call, residual, residual, zero, normalCG(ctx), []RootOption{DenseUpTo(0)}) })
	switch {
	case diffErr != nil:
		return nil, op.differentiating(diffErr)
	case err != nil:
		return nil, fmt.Errorf("solving with the transposed Jacobian of %s: %w", op.fn, traced(err))
	}
	return lambda, nil
}

// normalCG solves the linear system F(u) = A·u − b = 0 by conjugate
// gradients on the normal equations AᵀA·u = Aᵀb (CGNR), in a While loop:
// A's products from F (A·p = F(p) − F(0)), Aᵀ's from F's gradients.
// It stops when ‖b − A·u‖ is at most 1e-12·‖b‖ (1e-5 in float32), or
// after 2n + 10 steps.
func normalCG(ctx *graph.GradContext) RootSolve {
	return func(F RootFunc, u0 *graph.Node) *graph.Node {
		g := u0.Graph()
		tol := 1e-12
		if u0.DType() == graph.Float32 {
			tol = 1e-5
		}
		transposed := func(at, r *graph.Node) *graph.Node { // Aᵀ·r
			d, err := ctx.Differentiate([]*graph.Node{F(at)}, []*graph.Node{r}, []*graph.Node{at})
			if err != nil {
				return at.Graph().Fail(err)
			}
			return d[0]
		}
		// The loop carries u flat (flatLoop): u of rank graph.MaxRank could
		// not be stacked over its steps.
		shape := u0.Shape()
		u0, F, _ = flatLoop(F, u0)
		f0 := F(g.Const(graph.NewDenseOf(u0.Type()))) // −b
		bound := Scale(Sum(Square(f0)), tol*tol)
		r0 := Neg(F(u0))
		z0 := transposed(u0, r0)
		final, _ := While(func(c []*graph.Node) *graph.Node {
			return Greater(Sum(Square(c[1])), bound)
		}, func(c []*graph.Node) []*graph.Node {
			u, r, z, p := c[0], c[1], c[2], c[3]
			w := Sub(F(p), f0) // A·p
			zz := Sum(Square(z))
			alpha := Div(zz, Sum(Square(w)))
			u, r = Add(u, Mul(alpha, p)), Sub(r, Mul(alpha, w))
			zNext := transposed(u, r)
			p = Add(zNext, Mul(Div(Sum(Square(zNext)), zz), p))
			return []*graph.Node{u, r, zNext, p}
		}, []*graph.Node{u0, r0, z0, z0}, MaxSteps(2*u0.Type().Size()+10))
		return Reshape(final[0], shape...)
	}
}
