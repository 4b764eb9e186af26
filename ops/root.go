package ops

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// RootFunc is a function of x whose root Root finds, or the map whose
// fixed point FixedPoint finds: a node of x's type. It is called to build
// its graph, as often as the solve calls it and twice more (to check it
// and to differentiate it at the solution), and may read any node of the
// graph besides x: those are the parameters the solution depends on.
type RootFunc func(x *graph.Node) *graph.Node

// RootSolve builds the forward solve of Root: from F and the initial
// guess x0, a node of x0's type where F is (close to) zero. It may build
// any graph computation, typically a While loop of Newton or fixed-point
// steps; it is never differentiated.
type RootSolve func(F RootFunc, x0 *graph.Node) *graph.Node

// Root returns x*, the root of F that solve finds from x0 (F(x*) = 0),
// and differentiates it by the implicit function theorem rather than
// through the solve, as JAX's custom_root does. F reads parameters θ,
// the nodes of the graph besides x it reads; near the root
// ∂F/∂x·dx* + ∂F/∂θ·dθ = 0, so the gradient of a loss L is
//
//	λ = (∂F/∂x)⁻ᵀ ∂L/∂x*,   ∂L/∂θ = −(∂F/∂θ)ᵀ λ
//
// and the forward rule dx* = −(∂F/∂x)⁻¹ ∂F/∂θ·dθ, both at x*. x0 and the
// solve get no gradient: the root does not depend on them.
//
// The linear solve is dense: ∂F/∂x at x* is formed from one
// vector–Jacobian product of F per element of x (a forward-mode product
// in the forward rule) and solved by LU factorisation (Solve). That suits
// the small systems Root is for (x of up to a few hundred elements); its
// cost, n products of F and an n×n factorisation for an x of n
// elements, is paid once per derivative, whatever the number of the
// solve's steps. All of it is built from graph ops at the solution node
// itself, so the derivatives of every order are those of the exact
// root, computed again by the same rule. A singular ∂F/∂x at the root is
// Solve's run-time error.
//
// The derivatives are those of the root only as far as solve converges:
// a solve that stops short of F(x) = 0 gives the derivatives of the root
// near which it stopped. The program also computes F once at the solution
// (what the derivatives are built from).
//
// A nil F, x0 or solve, an x0 that is not float32 or float64, an F that
// panics, returns a node of another type than x0's or makes parameters or
// inputs, and a solve that panics or returns a node of another type than
// x0's are errors recorded on the graph, naming the caller's file:line.
func Root(F RootFunc, x0 *graph.Node, solve RootSolve) *graph.Node {
	return root("Root", graph.CallerSite(), "F", F, F, x0, solve)
}

// FixedPoint returns x* = T(x*), found by iterating x ← T(x) from x0 in a
// While loop until no element of T(x) − x exceeds tol in magnitude, at
// most MaxSteps times (MaxSteps is required, as for While). It is Root of
// F(x) = T(x) − x, and differentiated as Root is: by the implicit function
// theorem, with I − ∂T/∂x in place of ∂F/∂x, not through the iterations.
// T must be a contraction near x* for the iteration to converge. Errors
// are Root's and While's, named FixedPoint.
func FixedPoint(T RootFunc, x0 *graph.Node, tol float64, opts ...WhileOption) *graph.Node {
	var F RootFunc
	var iterate RootSolve
	if T != nil && x0 != nil {
		F = func(x *graph.Node) *graph.Node { return Sub(T(x), x) }
		bound := x0.Graph().Scalar(tol, x0.DType())
		iterate = func(_ RootFunc, x0 *graph.Node) *graph.Node {
			// The carry is (x, T(x)), so each step computes T once.
			final, _ := While(func(c []*graph.Node) *graph.Node {
				return Greater(Max(Abs(Sub(c[1], c[0]))), bound)
			}, func(c []*graph.Node) []*graph.Node {
				return []*graph.Node{c[1], T(c[1])}
			}, []*graph.Node{x0, T(x0)}, opts...)
			return final[1]
		}
	}
	return root("FixedPoint", graph.CallerSite(), "T", T, F, x0, iterate)
}

// root is Root called as name, from site s; fn names the user's function
// user (F, or FixedPoint's T), and F is the function whose root is found.
func root(name, s, fn string, user, F RootFunc, x0 *graph.Node, solve RootSolve) *graph.Node {
	g := x0.Graph()
	fail := func(format string, args ...any) *graph.Node {
		return g.Fail(&graph.Error{Op: name, Err: fmt.Errorf(format, args...), Site: s})
	}
	switch {
	case x0 == nil:
		return fail("x0 is nil")
	case x0.Err() != nil:
		return x0
	case !graph.IsFloat(x0.DType()):
		return fail("x0 has type %v: roots are found for float32 and float64 values", x0.Type())
	case user == nil:
		return fail("%s is nil", fn)
	case solve == nil:
		return fail("solve is nil")
	}
	if err := checkRootFunc(g, fn, user, x0.Type()); err != nil {
		return fail("%v", err)
	}
	xs, err := traceSolve(solve, F, x0)
	if err == nil {
		err = g.Err()
	}
	if err != nil {
		return fail("solve %v", err)
	}
	sol := []*graph.Node{xs}
	if err := captureOutputs(g, "solve", sol); err != nil {
		return fail("%v", err)
	}
	if xs = sol[0]; !xs.Type().Equal(x0.Type()) {
		return fail("solve returns a node of type %v, want x0's %v", xs.Type(), x0.Type())
	}
	// F at the solution, whose nodes the derivatives replay at x*: xp
	// stands for x there.
	xp := StopGradient(xs)
	start := g.Len()
	fx, err := traceRootFunc(F, xp)
	if err == nil {
		err = g.Err()
	}
	if err != nil {
		return fail("%s %v", fn, err)
	}
	read, err := tracedReads(g, start, []*graph.Node{xp}, fn, "read inputs made outside "+fn)
	if err != nil {
		return fail("%v", err)
	}
	return graph.Apply(rootOp{name: name}, slices.Concat([]*graph.Node{xs, xp, fx}, read)...)
}

// traceSolve calls the user's solve, turning a panic into an error.
func traceSolve(solve RootSolve, F RootFunc, x0 *graph.Node) (x *graph.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panicked: %v", r)
		}
	}()
	x = solve(F, x0)
	if x == nil || x.Err() != nil {
		return nil, fmt.Errorf("returns a nil or poisoned node: %v", x)
	}
	return x, nil
}

// traceRootFunc calls F on x, turning a panic into an error.
func traceRootFunc(F RootFunc, x *graph.Node) (*graph.Node, error) {
	outs, _, err := traceBody(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return []*graph.Node{F(c[0])}, nil
	}, []*graph.Node{x}, nil)
	if err != nil {
		return nil, err
	}
	if outs[0] == nil || outs[0].Err() != nil {
		return nil, fmt.Errorf("returns a nil or poisoned node: %v", outs[0])
	}
	return outs[0], nil
}

// checkRootFunc traces F (named fn) once in a graph of its own, nested in g, to check
// that it returns a node of x's type before the solve calls it.
func checkRootFunc(g *graph.Graph, fn string, F RootFunc, x graph.Type) error {
	sub := g.NewSub()
	in := sub.Input("x", x.DType, x.Shape...)
	fx, err := traceRootFunc(F, in)
	if err == nil {
		err = sub.Err()
	}
	if err != nil {
		return fmt.Errorf("%s %v", fn, err)
	}
	out := []*graph.Node{fx}
	if err := captureOutputs(sub, fn, out); err != nil {
		return err
	}
	if !out[0].Type().Equal(x) {
		return fmt.Errorf("%s returns a node of type %v for x of type %v: it must return x's type", fn, out[0].Type(), x)
	}
	_, captured := sub.Captures()
	return checkBodyLeaves(sub, fn, "x", append(captured, in))
}

// rootOp passes the solve's result through, and differentiates it by the
// implicit function theorem. Its inputs are the solve's result xs, the
// node xp standing for it in F's graph at the solution, that graph's
// output F(xp), and the nodes that graph reads besides xp (θ); only θ
// gets a gradient.
type rootOp struct{ name string }

// rootParams is the index of rootOp's first θ input.
const rootParams = 3

func (op rootOp) Name() string { return op.name }

func (op rootOp) Type(in []graph.Type) (graph.Type, error) {
	if len(in) < rootParams {
		return graph.Type{}, fmt.Errorf("%d inputs: want the solution, its stand-in, F there and F's parameters", len(in))
	}
	return in[0], nil
}

func (rootOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return copyForward(out, in[0])
}

// Backward solves (∂F/∂x)ᵀλ = gOut at x* and returns −(∂F/∂θ)ᵀλ for
// each parameter θ.
func (op rootOp) Backward(ctx *graph.GradContext, gOut *graph.Node) []*graph.Node {
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
	fx, params, err := linearise(x, in)
	if err != nil {
		ctx.Errorf("%v", err)
		return nil
	}
	// Row i of ∂F/∂x is the gradient of F_i: a product with unit seed i.
	jac, err := rootJacobian(x, func(e *graph.Node) (*graph.Node, error) {
		r, err := ctx.Differentiate([]*graph.Node{fx}, []*graph.Node{e}, []*graph.Node{x})
		if err != nil {
			return nil, err
		}
		return r[0], nil
	})
	if err != nil {
		ctx.Errorf("the Jacobian of F: %v", err)
		return nil
	}
	n := x.Type().Size()
	lambda := graph.Apply(SolveOp(true, false), jac, Reshape(gOut, n, 1))
	wrt := make([]*graph.Node, len(wanted))
	for k, i := range wanted {
		wrt[k] = params[i-rootParams]
	}
	grads, err := ctx.Differentiate([]*graph.Node{fx}, []*graph.Node{Neg(Reshape(lambda, x.Shape()...))}, wrt)
	if err != nil {
		ctx.Errorf("differentiating F: %v", err)
		return nil
	}
	for k, i := range wanted {
		out[i] = grads[k]
	}
	return out
}

// JVP solves ∂F/∂x·t = −∂F/∂θ·dθ at x*. Batched tangents are declined:
// the driver derives them from Backward.
func (op rootOp) JVP(ctx *graph.JVPContext) *graph.Node {
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
	if ctx.Batch() > 0 {
		ctx.Decline()
		return nil
	}
	x := ctx.Output()
	fx, params, err := linearise(x, in)
	if err != nil {
		ctx.Decline()
		return nil
	}
	sweep := func(from, dir []*graph.Node) (*graph.Node, error) {
		r, err := ctx.Sweep([]*graph.Node{fx}, from, dir)
		if err != nil {
			return nil, err
		}
		return r[0], nil
	}
	// Column j of ∂F/∂x is F's tangent along unit vector j.
	cols, err := rootJacobian(x, func(e *graph.Node) (*graph.Node, error) { return sweep([]*graph.Node{x}, []*graph.Node{e}) })
	if err != nil {
		ctx.Decline()
		return nil
	}
	xs, ts := make([]*graph.Node, len(moved)), make([]*graph.Node, len(moved))
	for k, i := range moved {
		xs[k], ts[k] = params[i-rootParams], ctx.Tangent(i)
	}
	rhs, err := sweep(xs, ts)
	if err != nil {
		ctx.Decline()
		return nil
	}
	n := x.Type().Size()
	return Neg(Reshape(graph.Apply(SolveOp(true, false), cols, Reshape(rhs, n, 1)), x.Shape()...))
}

// linearise rebuilds F at the solution x (the op's output) from the op's
// inputs in: F's graph replayed with x for its stand-in, and with a node
// of its own for each parameter, so that each is differentiated apart
// from the others (a parameter may be computed from another) and from x
// (which depends on them all through the op).
func linearise(x *graph.Node, in []*graph.Node) (fx *graph.Node, params []*graph.Node, err error) {
	subst := map[*graph.Node]*graph.Node{in[1]: x}
	params = make([]*graph.Node, len(in)-rootParams)
	for k, p := range in[rootParams:] {
		if params[k] = subst[p]; params[k] == nil {
			params[k] = Identity(p)
			subst[p] = params[k]
		}
	}
	again, err := graph.Replay(subst, in[2])
	if err != nil {
		return nil, nil, fmt.Errorf("F at the solution: %v", err)
	}
	if fx = again[in[2]]; fx == nil {
		fx = in[2] // F reads neither x nor parameters
	}
	return fx, params, nil
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
