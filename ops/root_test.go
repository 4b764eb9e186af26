package ops_test

import (
	"math"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// sqrtNewton solves x² = a for each element of a by Newton's iteration in
// a While loop, until no |x² − a| exceeds 1e-14·a.
func sqrtNewton(a *graph.Node, opts ...ops.RootOption) *graph.Node {
	g := a.Graph()
	tol := ops.Scale(a, 1e-14)
	return ops.Root(func(x *graph.Node) *graph.Node { return ops.Sub(ops.Square(x), a) }, ops.Add(ops.Scale(a, 0.5), g.Scalar(0.5, graph.Float64)),
		func(F ops.RootFunc, x0 *graph.Node) *graph.Node {
			final, _ := ops.While(func(c []*graph.Node) *graph.Node {
				return ops.Greater(ops.Max(ops.Sub(ops.Abs(F(c[0])), tol)), g.Scalar(0, graph.Float64))
			}, func(c []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Sub(c[0], ops.Div(F(c[0]), ops.Scale(c[0], 2)))}
			}, []*graph.Node{x0}, ops.MaxSteps(60))
			return final[0]
		}, opts...)
}

// rootSolves are Root's two ways of solving with ∂F/∂x, for the tests
// to run each in.
var rootSolves = []struct {
	name string
	opts []ops.RootOption
}{{"dense", nil}, {"matrix-free", []ops.RootOption{ops.DenseUpTo(0)}}}

// √a's derivatives with respect to a, to third order and in forward mode,
// against their values by hand: a^½/2, −a^(−3/2)/4, 3a^(−5/2)/8.
func TestRootDerivativesByHand(t *testing.T) {
	for _, solve := range rootSolves {
		g := graph.New()
		av := []float64{2, 9, 0.3}
		a := g.Param("a", f64(t, av, 3))
		x := sqrtNewton(a, solve.opts...)
		d1, err := compile.Grad(ops.Sum(x), a)
		if err != nil {
			t.Fatal(err)
		}
		d2, err := compile.Grad(ops.Sum(d1[0]), a) // elementwise: the diagonal
		if err != nil {
			t.Fatal(err)
		}
		d3, err := compile.Grad(ops.Sum(d2[0]), a)
		if err != nil {
			t.Fatal(err)
		}
		tangent := g.Const(f64(t, []float64{1, 1, 1}, 3))
		fwd, err := compile.JVP([]*graph.Node{x, d1[0]}, []*graph.Node{a}, []*graph.Node{tangent})
		if err != nil {
			t.Fatal(err)
		}
		got := run(t, []*graph.Node{x, d1[0], d2[0], d3[0], fwd[0], fwd[1]}, nil)
		for i, v := range av {
			want := []float64{math.Sqrt(v), 0.5 / math.Sqrt(v), -0.25 * math.Pow(v, -1.5), 0.375 * math.Pow(v, -2.5),
				0.5 / math.Sqrt(v), -0.25 * math.Pow(v, -1.5)}
			names := []string{"√a", "first", "second", "third", "forward first", "forward over reverse"}
			for k, w := range want {
				if math.Abs(got[k][i]-w) > 1e-12*math.Max(1, math.Abs(w)) {
					t.Errorf("%s, a = %v, %s: got %v, want %v", solve.name, v, names[k], got[k][i], w)
				}
			}
		}
	}
}

// system is the 2-unknown nonlinear system F(x; θ) =
// (x₀ + θ₀·tanh(x₁) − θ₁, x₁³/3 + x₁ − θ₂·sin(x₀)), with its Jacobian by
// hand, for Newton steps.
type system struct{ theta *graph.Node }

func (s system) F(x *graph.Node) *graph.Node {
	x0, x1 := ops.Slice(x, 0, 0, 1), ops.Slice(x, 0, 1, 2)
	t0, t1, t2 := ops.Slice(s.theta, 0, 0, 1), ops.Slice(s.theta, 0, 1, 2), ops.Slice(s.theta, 0, 2, 3)
	return ops.Concat(0, ops.Sub(ops.Add(x0, ops.Mul(t0, ops.Tanh(x1))), t1),
		ops.Sub(ops.Add(ops.Scale(ops.Mul(ops.Square(x1), x1), 1.0/3), x1), ops.Mul(t2, ops.Sin(x0))))
}

// newtonStep is x − J(x)⁻¹F(x).
func (s system) newtonStep(x *graph.Node) *graph.Node {
	x0, x1 := ops.Slice(x, 0, 0, 1), ops.Slice(x, 0, 1, 2)
	t0, t2 := ops.Slice(s.theta, 0, 0, 1), ops.Slice(s.theta, 0, 2, 3)
	one := x.Graph().Scalar(1, graph.Float64)
	th := ops.Tanh(x1)
	jac := ops.Reshape(ops.Concat(0, one1(one), ops.Mul(t0, ops.Sub(one, ops.Square(th))),
		ops.Neg(ops.Mul(t2, ops.Cos(x0))), ops.Add(ops.Square(x1), one)), 2, 2)
	return ops.Sub(x, ops.Reshape(ops.Solve(jac, ops.Reshape(s.F(x), 2, 1)), 2))
}

func one1(one *graph.Node) *graph.Node { return ops.Reshape(one, 1) }

// derivatives are a loss of the solution x, its gradient with respect to
// θ, the gradient of that gradient's squared norm, the Hessian of the
// loss (forward over reverse) and the tangent of x along a direction of θ.
func rootDerivatives(t *testing.T, x, theta *graph.Node) []*graph.Node {
	g := x.Graph()
	loss := ops.Sum(ops.Mul(ops.Exp(x), g.Const(f64(t, []float64{0.7, -1.3}, 2))))
	d1, err := compile.Grad(loss, theta)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := compile.Grad(ops.Sum(ops.Square(d1[0])), theta)
	if err != nil {
		t.Fatal(err)
	}
	h, err := compile.Hessian(loss, theta)
	if err != nil {
		t.Fatal(err)
	}
	dx, err := compile.JVP([]*graph.Node{x}, []*graph.Node{theta}, []*graph.Node{g.Const(f64(t, []float64{0.3, -0.5, 0.9}, 3))})
	if err != nil {
		t.Fatal(err)
	}
	return []*graph.Node{x, loss, d1[0], d2[0], h, dx[0]}
}

// Root's derivatives, to second order in reverse mode and forward over
// reverse, are those of Newton's iteration unrolled (by Scan) to
// convergence: the derivative of a converged Newton step with respect to
// x is zero, so differentiating the unrolled steps gives the implicit
// function theorem's values.
func TestRootMatchesUnrolledNewton(t *testing.T) {
	for _, solve := range rootSolves {
		thetaV := []float64{0.8, 0.4, 1.1}
		g := graph.New()
		s := system{g.Param("theta", f64(t, thetaV, 3))}
		x0 := g.Const(f64(t, []float64{0, 0}, 2))
		x := ops.Root(s.F, x0, func(F ops.RootFunc, x0 *graph.Node) *graph.Node {
			final, _ := ops.While(func(c []*graph.Node) *graph.Node {
				return ops.Greater(ops.Max(ops.Abs(F(c[0]))), g.Scalar(1e-15, graph.Float64))
			}, func(c []*graph.Node) []*graph.Node { return []*graph.Node{s.newtonStep(c[0])} },
				[]*graph.Node{x0}, ops.MaxSteps(50))
			return final[0]
		}, solve.opts...)
		got := run(t, rootDerivatives(t, x, s.theta), nil)

		u := graph.New()
		su := system{u.Param("theta", f64(t, thetaV, 3))}
		final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
			return []*graph.Node{su.newtonStep(c[0])}, nil
		}, []*graph.Node{u.Const(f64(t, []float64{0, 0}, 2))}, nil, ops.Steps(30))
		want := run(t, rootDerivatives(t, final[0], su.theta), nil)
		names := []string{"x", "loss", "first", "second", "Hessian", "tangent"}
		for i := range want {
			for j := range want[i] {
				if math.Abs(got[i][j]-want[i][j]) > 1e-10*math.Max(1, math.Abs(want[i][j])) {
					t.Fatalf("%s, %s: Root gives %v, unrolled Newton %v", solve.name, names[i], got[i], want[i])
				}
			}
		}
	}
}

// FixedPoint's solution of x = θ·cos(x) + c and its derivative with
// respect to θ against the theorem by hand: dx/dθ = cos x / (1 + θ sin x).
func TestFixedPointByHand(t *testing.T) {
	g := graph.New()
	theta := g.Param("theta", f64(t, []float64{0.5, -0.3}, 2))
	c := g.Const(f64(t, []float64{0.2, 1}, 2))
	x := ops.FixedPoint(func(x *graph.Node) *graph.Node { return ops.Add(ops.Mul(theta, ops.Cos(x)), c) },
		g.Const(f64(t, []float64{0, 0}, 2)), 1e-15, 200)
	d, err := compile.Grad(ops.Sum(x), theta)
	if err != nil {
		t.Fatal(err)
	}
	got := run(t, []*graph.Node{x, d[0]}, nil)
	for i, th := range []float64{0.5, -0.3} {
		xv := got[0][i]
		if r := th*math.Cos(xv) + []float64{0.2, 1}[i] - xv; math.Abs(r) > 1e-14 {
			t.Errorf("element %d: x = %v leaves %v", i, xv, r)
		}
		if want := math.Cos(xv) / (1 + th*math.Sin(xv)); math.Abs(got[1][i]-want) > 1e-12 {
			t.Errorf("element %d: dx/dθ = %v, want %v", i, got[1][i], want)
		}
	}
}

func TestRootErrors(t *testing.T) {
	newton := func(F ops.RootFunc, x0 *graph.Node) *graph.Node { return F(x0) }
	square := func(x *graph.Node) *graph.Node { return ops.Square(x) }
	cases := []struct {
		name, op string
		build    func(g *graph.Graph) *graph.Node
		want     string
	}{
		{"integer x0", "Root", func(g *graph.Graph) *graph.Node {
			return ops.Root(square, g.Input("n", graph.Int64, 2), newton)
		}, "x0 has type int64(2): roots are found for float32 and float64 values"},
		{"F returns another shape", "Root", func(g *graph.Graph) *graph.Node {
			return ops.Root(func(x *graph.Node) *graph.Node { return ops.Concat(0, x, x) }, g.Input("x", graph.Float64, 2), newton)
		}, "F returns a node of type float64(4) for x of type float64(2): it must return x's type"},
		{"F returns another dtype", "Root", func(g *graph.Graph) *graph.Node {
			return ops.Root(func(x *graph.Node) *graph.Node { return ops.Cast(x, graph.Float32) }, g.Input("x", graph.Float64, 2), newton)
		}, "F returns a node of type float32(2) for x of type float64(2): it must return x's type"},
		{"solve returns another shape", "Root", func(g *graph.Graph) *graph.Node {
			return ops.Root(square, g.Input("x", graph.Float64, 2), func(_ ops.RootFunc, x0 *graph.Node) *graph.Node { return ops.Sum(x0) })
		}, "solve returns a node of type float64(), want x0's float64(2)"},
		{"solve returns nil", "Root", func(g *graph.Graph) *graph.Node {
			return ops.Root(square, g.Input("x", graph.Float64, 2), func(ops.RootFunc, *graph.Node) *graph.Node { return nil })
		}, "solve returns a nil or poisoned node: <nil node>"},
		{"F panics", "Root", func(g *graph.Graph) *graph.Node {
			return ops.Root(func(*graph.Node) *graph.Node { panic("boom") }, g.Input("x", graph.Float64, 2), newton)
		}, "F panicked: boom"},
		{"solve panics", "Root", func(g *graph.Graph) *graph.Node {
			return ops.Root(square, g.Input("x", graph.Float64, 2), func(ops.RootFunc, *graph.Node) *graph.Node { panic("boom") })
		}, "solve panicked: boom"},
		{"F makes a parameter", "Root", func(g *graph.Graph) *graph.Node {
			return ops.Root(func(x *graph.Node) *graph.Node {
				return ops.Mul(x, x.Graph().Param("w", graph.NewDense(graph.Float64, 2)))
			}, g.Input("x", graph.Float64, 2), newton)
		}, `F makes parameter param "w"`},
		{"nil F", "Root", func(g *graph.Graph) *graph.Node { return ops.Root(nil, g.Input("x", graph.Float64, 2), newton) }, "F is nil"},
		{"nil solve", "Root", func(g *graph.Graph) *graph.Node { return ops.Root(square, g.Input("x", graph.Float64, 2), nil) }, "solve is nil"},
		{"nil T", "FixedPoint", func(g *graph.Graph) *graph.Node {
			return ops.FixedPoint(nil, g.Input("x", graph.Float64, 2), 1e-9, 3)
		}, "T is nil"},
		{"T returns another shape", "FixedPoint", func(g *graph.Graph) *graph.Node {
			return ops.FixedPoint(func(x *graph.Node) *graph.Node { return ops.Sum(x) }, g.Input("x", graph.Float64, 2), 1e-9, 3)
		}, "T returns a node of type float64() for x of type float64(2): it must return x's type"},
		{"FixedPoint of an integer x0", "FixedPoint", func(g *graph.Graph) *graph.Node {
			return ops.FixedPoint(ops.Neg, g.Input("n", graph.Int64, 2), 1e-9, 3)
		}, "x0 has type int64(2): roots are found for float32 and float64 values"},
		{"FixedPoint with a NaN tolerance", "FixedPoint", func(g *graph.Graph) *graph.Node {
			return ops.FixedPoint(ops.Cos, g.Input("x", graph.Float64, 2), math.NaN(), 3)
		}, "tol NaN is not a number ≥ 0"},
		{"FixedPoint without steps", "FixedPoint", func(g *graph.Graph) *graph.Node {
			return ops.FixedPoint(ops.Cos, g.Input("x", graph.Float64, 2), 1e-9, 0)
		}, "maxSteps 0 is not positive: bound the iterations"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.build(graph.New()).Err()
			if err == nil || !strings.Contains(err.Error(), "nabla: "+c.op+": "+c.want) || !strings.Contains(err.Error(), "root_test.go:") {
				t.Fatalf("error %v, want one from %s containing %q and the caller's file", err, c.op, c.want)
			}
		})
	}
}

// A loss reading Root's solution compiles and runs its gradient step by
// step as a vm.Machine would in training: the solution and the gradient
// follow the parameter fed.
func TestRootFollowsItsInput(t *testing.T) {
	g := graph.New()
	a := g.Input("a", graph.Float64, 1)
	x := sqrtNewton(a)
	d, err := compile.Grad(ops.Sum(x), a)
	if err != nil {
		t.Fatal(err)
	}
	p, err := compile.Compile([]*graph.Node{x, d[0]})
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{4, 0.25, 100} {
		if err := m.Run(vm.Feeds{a: f64(t, []float64{v}, 1)}); err != nil {
			t.Fatal(err)
		}
		xv, _ := m.Value(x)
		dv, _ := m.Value(d[0])
		if got, want := graph.Float64s(xv)[0], math.Sqrt(v); math.Abs(got-want) > 1e-13*want {
			t.Errorf("a = %v: x = %v, want %v", v, got, want)
		}
		if got, want := graph.Float64s(dv)[0], 0.5/math.Sqrt(v); math.Abs(got-want) > 1e-12*want {
			t.Errorf("a = %v: dx/da = %v, want %v", v, got, want)
		}
	}
}

// Above 64 unknowns Root's gradient solves matrix-free (no Solve node),
// below it dense (Solve nodes): both give the gradient of a coupled
// system of 80 unknowns, x = tanh(x·W)/2 + b solved by FixedPoint, to
// rounding.
func TestRootChoosesItsSolveBySize(t *testing.T) {
	const n = 80
	grads := make([][]float64, 2)
	for k, opts := range [][]ops.RootOption{nil, {ops.DenseUpTo(n)}} {
		g := graph.New()
		w := make([]float64, n*n)
		bv := make([]float64, n)
		for i := range w {
			w[i] = 0.9 * math.Sin(float64(3*i+1)) / math.Sqrt(n)
		}
		for i := range bv {
			bv[i] = math.Cos(float64(i))
		}
		W := g.Param("W", f64(t, w, n, n))
		b := g.Param("b", f64(t, bv, 1, n))
		x := ops.FixedPoint(func(x *graph.Node) *graph.Node {
			return ops.Add(ops.Scale(ops.Tanh(ops.MatMul(x, W)), 0.5), b)
		}, b, 1e-14, 200, opts...)
		start := g.Len()
		d, err := compile.Grad(ops.Sum(ops.Mul(x, ops.Sin(b))), b)
		if err != nil {
			t.Fatal(err)
		}
		solves := 0
		for _, m := range g.Nodes()[start:] {
			if m.OpName() == "Solve" {
				solves++
			}
		}
		if dense := k == 1; dense != (solves > 0) {
			t.Errorf("DenseUpTo(%v): %d Solve nodes", k*n, solves)
		}
		grads[k] = run(t, d, nil)[0]
	}
	for i := range grads[0] {
		if math.Abs(grads[0][i]-grads[1][i]) > 1e-10*math.Max(1, math.Abs(grads[1][i])) {
			t.Fatalf("element %d: matrix-free %v, dense %v", i, grads[0][i], grads[1][i])
		}
	}
}

// Replaying a Root for new parameters (as a Checkpoint's recomputation
// does) gives the new root and its derivative, in either way of solving
// with ∂F/∂x (matrix-free, which built F again from the Go function,
// reading the old parameters, refused it). The solve is 30 Newton steps built one after the other (a While loop's body
// would have to read a as a carry to be replayed).
func TestRootReplay(t *testing.T) {
	for _, solve := range rootSolves {
		g := graph.New()
		a := g.Input("a", graph.Float64, 1)
		x := ops.Root(func(x *graph.Node) *graph.Node { return ops.Sub(ops.Square(x), a) }, a,
			func(F ops.RootFunc, x *graph.Node) *graph.Node {
				for range 30 {
					x = ops.Sub(x, ops.Div(F(x), ops.Scale(x, 2)))
				}
				return x
			}, solve.opts...)
		b := ops.Scale(a, 4)
		again, err := graph.Replay(map[*graph.Node]*graph.Node{a: b}, x)
		if err != nil {
			t.Fatal(err)
		}
		d, err := compile.Grad(ops.Sum(again[x]), a)
		if err != nil {
			t.Fatal(err)
		}
		got := run(t, []*graph.Node{again[x], d[0]}, vm.Feeds{a: f64(t, []float64{2.25}, 1)})
		if math.Abs(got[0][0]-3) > 1e-13 || math.Abs(got[1][0]-2.0/3) > 1e-13 { // √(4a) = 2√a, 1/√a
			t.Errorf("%s: √(4a) = %v, its derivative %v; want 3, 2/3", solve.name, got[0][0], got[1][0])
		}
	}
}

// The benchmark's three ways to the gradient agree: FixedPoint's, dense
// and matrix-free, and that of the iterations unrolled in a Scan (to
// convergence, so the unrolled derivative is the theorem's).
func TestRootGradientMatchesUnrolledFixedPoint(t *testing.T) {
	for _, n := range []int{8, 64, 256} {
		want := run(t, rootModel(n, "unrolled"), nil)
		for _, how := range []string{"dense", "matrix-free"} {
			got := run(t, rootModel(n, how), nil)
			for i := range want {
				for j := range want[i] {
					if math.Abs(got[i][j]-want[i][j]) > 1e-10*math.Max(1, math.Abs(want[i][j])) {
						t.Fatalf("n=%d, %s, output %d element %d: %v, unrolled %v", n, how, i, j, got[i][j], want[i][j])
					}
				}
			}
		}
	}
}

// At a root where ∂F/∂x is singular (x² = 0 at x = 0) the dense gradient
// is Solve's run-time error, not a value.
func TestRootSingularJacobian(t *testing.T) {
	g := graph.New()
	a := g.Param("a", f64(t, []float64{0}, 1))
	x := ops.Root(func(x *graph.Node) *graph.Node { return ops.Sub(ops.Square(x), a) }, a,
		func(_ ops.RootFunc, x0 *graph.Node) *graph.Node { return x0 })
	d, err := compile.Grad(ops.Sum(x), a)
	if err != nil {
		t.Fatal(err)
	}
	p, err := compile.Compile(d)
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(nil); err == nil || !strings.Contains(err.Error(), "singular") {
		t.Fatalf("error %v, want Solve's singular matrix", err)
	}
}
