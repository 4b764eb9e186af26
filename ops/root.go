package ops

import (
	"errors"
	"fmt"
	"slices"
	"strings"

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
// solve get no gradient, nor a tangent in forward mode: the root does not
// depend on them, and the solve need not be differentiable.
//
// The linear solves are built from graph ops at the solution node
// itself, so the derivatives of every order are those of the exact root,
// computed again by the same rule. How they solve depends on n, the
// number of x's elements (see DenseUpTo):
//
//   - up to 64, dense: ∂F/∂x at x* is formed from n vector–Jacobian
//     products of F (forward-mode products in the forward rule) and
//     solved by LU factorisation (Solve). Its cost, n products and an
//     n×n factorisation, is paid once per derivative, whatever the number
//     of the solve's steps. A singular ∂F/∂x is Solve's run-time error.
//   - above, matrix-free: λ is itself a Root, of u ↦ (∂F/∂x)ᵀu − ∂L/∂x*,
//     found by conjugate gradients on the normal equations in a While
//     loop (at most 2n + 10 steps, to a residual of 1e-12 of the right
//     side's norm in float64, 1e-5 in float32), each step one
//     vector–Jacobian product of F and one of that product. Its own
//     derivatives (the second order) are then those of a Root again. The
//     forward rule is derived from the gradient.
//
// The derivatives are those of the root only as far as solve converges:
// a solve that stops short of F(x) = 0 gives the derivatives of the root
// near which it stopped. The program also computes F once at the solution
// (what the derivatives are built from).
//
// A nil F, x0 or solve, an x0 that is not float32 or float64, an F that
// panics, returns a node of another type than x0's or makes parameters or
// inputs, and a solve that panics, builds an op that fails or returns a
// node of another type than x0's are errors of Root's recorded on the
// graph, naming the failing op and the caller's file:line.
func Root(F RootFunc, x0 *graph.Node, solve RootSolve, opts ...RootOption) *graph.Node {
	return root(rootCall{name: "Root", site: graph.CallerSite(), fn: "F", solve: "solve"}, F, F, x0, solve, opts)
}

// RootOption configures Root and FixedPoint.
type RootOption func(*rootConfig)

type rootConfig struct{ denseUpTo int }

// defaultDenseUpTo is the size of x up to which Root's derivatives form
// ∂F/∂x.
const defaultDenseUpTo = 64

// DenseUpTo makes Root's derivatives form ∂F/∂x and solve with it by LU
// factorisation when x has at most n elements, and solve matrix-free, by
// conjugate gradients, above (the default n is 64).
func DenseUpTo(n int) RootOption { return func(c *rootConfig) { c.denseUpTo = n } }

// FixedPoint returns x* = T(x*), found by iterating x ← T(x) from x0 in a
// While loop until no element of T(x) − x exceeds tol in magnitude, at
// most maxSteps times. It is Root of F(x) = T(x) − x, and differentiated
// as Root is: by the implicit function theorem, with I − ∂T/∂x in place of
// ∂F/∂x, not through the iterations. T must be a contraction near x* for
// the iteration to converge. Errors are Root's, naming T for F, a
// maxSteps that is not positive and a tol that is negative or NaN; the
// loop is FixedPoint's own, and its errors are FixedPoint's, naming no
// While.
func FixedPoint(T RootFunc, x0 *graph.Node, tol float64, maxSteps int, opts ...RootOption) *graph.Node {
	s := graph.CallerSite()
	switch {
	case maxSteps <= 0:
		return rootFail(x0.Graph(), "FixedPoint", s, "maxSteps %d is not positive: bound the iterations", maxSteps)
	case flagsFit(maxSteps) != nil:
		return rootFail(x0.Graph(), "FixedPoint", s, "maxSteps %d: %v", maxSteps, flagsFit(maxSteps))
	case !(tol >= 0):
		return rootFail(x0.Graph(), "FixedPoint", s, "tol %v is not a number ≥ 0", tol)
	}
	var F RootFunc
	var iterate RootSolve
	if T != nil && x0 != nil && x0.Err() == nil && graph.IsFloat(x0.DType()) {
		F = func(x *graph.Node) *graph.Node { return Sub(T(x), x) }
		g := x0.Graph()
		bound := g.Scalar(tol, x0.DType())
		iterate = func(_ RootFunc, x0 *graph.Node) *graph.Node {
			// The carry is (x, T(x)), so each step computes T once; flat
			// (see flatLoop).
			flat, Tv, unflat := flatLoop(T, x0)
			var final []*graph.Node
			err := g.Catch(func() {
				final, _ = While(func(c []*graph.Node) *graph.Node {
					if c[0].Type().Size() == 0 { // no element to move: a fixed point
						return Greater(bound, bound)
					}
					return Greater(Max(Abs(Sub(c[1], c[0]))), bound)
				}, func(c []*graph.Node) []*graph.Node {
					return []*graph.Node{c[1], Tv(c[1])}
				}, []*graph.Node{flat, Tv(flat)}, MaxSteps(maxSteps))
			})
			if err != nil {
				return rootFail(g, "FixedPoint", s, "iterating x ← T(x): %v", ownLoopError(err, "T"))
			}
			return unflat(final[1])
		}
	}
	return root(rootCall{name: "FixedPoint", site: s, fn: "T", solve: "iterating x ← T(x)", own: true}, T, F, x0, iterate, opts)
}

// flatLoop is x0 flattened to a vector, the function f on such vectors
// (f taking and returning x0's shape), and the way back to x0's shape: the
// loops of FixedPoint and of Root's matrix-free derivatives carry x so,
// since a loop stacks its carries over its steps, which a carry of rank
// graph.MaxRank could not be.
//
// The sizes are given as -1 where they may follow a batch (the flat
// size, x's leading axis), so that a vm.Runner replays them at another.
func flatLoop(f RootFunc, x0 *graph.Node) (flat *graph.Node, fv RootFunc, unflat func(*graph.Node) *graph.Node) {
	shape := slices.Clone(x0.Shape())
	if len(shape) > 0 && x0.Type().Size() > 0 {
		shape[0] = -1
	}
	unflat = func(v *graph.Node) *graph.Node { return Reshape(v, shape...) }
	fv = func(v *graph.Node) *graph.Node { return Reshape(f(unflat(v)), -1) }
	return Reshape(x0, -1), fv, unflat
}

// ownLoopError is err, recorded by the loop a builder makes itself
// (FixedPoint's While, whose body steps the user's function fn), as that
// builder tells it: the loop's own error without its name and the
// caller's line, which the builder's error gives, and its body named fn
// ("T panicked: …", "T: Mul at model.go:43: …"); another op's error as a
// nested graph's (see traced).
func ownLoopError(err error, fn string) error {
	gerr, ok := err.(*graph.Error)
	if !ok || gerr.Op != "While" || gerr.Err == nil {
		return traced(err)
	}
	msg := gerr.Err.Error()
	if rest, ok := strings.CutPrefix(msg, "body: panicked"); ok {
		msg = fn + " panicked" + rest
	} else if rest, ok := strings.CutPrefix(msg, "body: "); ok {
		msg = fn + ": " + rest
	}
	return errors.New(msg)
}

// rootFail records on g the error of the builder name called at site s.
func rootFail(g *graph.Graph, name, s, format string, args ...any) *graph.Node {
	return g.Fail(&graph.Error{Op: name, Err: fmt.Errorf(format, args...), Site: s})
}

// rootCall names a call of root in its errors.
type rootCall struct {
	name, site string // the builder called (Root, FixedPoint) and where
	fn         string // the user's function (F, FixedPoint's T)
	solve      string // the solve ("solve", the user's)
	own        bool   // the solve is the builder's: its errors are the builder's
}

// root is Root called as c says; user is the user's function, and F the
// function whose root is found.
func root(c rootCall, user, F RootFunc, x0 *graph.Node, solve RootSolve, opts []RootOption) *graph.Node {
	name, s, fn := c.name, c.site, c.fn
	g := x0.Graph()
	fail := func(format string, args ...any) *graph.Node { return rootFail(g, name, s, format, args...) }
	cfg := rootConfig{denseUpTo: defaultDenseUpTo}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
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
	var xs *graph.Node
	var err error
	if c.own {
		if built := g.Catch(func() { xs, err = traceSolve(solve, F, x0) }); built != nil {
			return g.Fail(built) // the builder's own error
		}
	} else if built := caught(g, c.solve, func() { xs, err = traceSolve(solve, F, x0) }); built != nil {
		return fail("%w", built)
	}
	if err == nil {
		err = g.Err()
	}
	if err != nil {
		return fail("%s %v", c.solve, err)
	}
	sol := []*graph.Node{xs}
	if err := captureOutputs(g, c.solve, sol); err != nil {
		return fail("%v", err)
	}
	if xs = sol[0]; !xs.Type().Equal(x0.Type()) {
		return fail("%s returns a node of type %v, want x0's %v", c.solve, xs.Type(), x0.Type())
	}
	// F at the solution, whose nodes the derivatives replay at x*: xp
	// stands for x there.
	xp := StopGradient(xs)
	start := g.Len()
	var fx *graph.Node
	if built := caught(g, fn, func() { fx, err = traceRootFunc(F, xp) }); built != nil {
		return fail("%w", built)
	}
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
	op := &rootOp{name: name, fn: fn, F: newRootTemplate(xp, fx, read, start), matrixFree: x0.Type().Size() > cfg.denseUpTo}
	return graph.Apply(op, slices.Concat([]*graph.Node{xs, xp, fx}, read)...)
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
	if serr := sub.Err(); serr != nil { // the cause of a poisoned result
		return fmt.Errorf("%s: %w", fn, traced(serr))
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
