package main

import (
	"fmt"
	"io"
	"math"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// The -sensitivity run: Rosenbrock's function with a parameter, minimised
// inside the graph, and its minimiser differentiated with respect to the
// parameter.
const (
	sensitivityA = 1.5
	// finiteStep is the step of the central differences the derivatives
	// are checked against.
	finiteStep = 1e-4
)

// ShiftedRosenbrock is (a−x)² + 100(y−x²)² of the 2-vector (x, y): its
// minimum is (a, a²), so the minimiser's derivatives with respect to a
// are (1, 2a) and (0, 2).
func ShiftedRosenbrock(p, a *graph.Node) *graph.Node {
	x, y := ops.Slice(p, 0, 0, 1), ops.Slice(p, 0, 1, 2)
	return ops.Sum(ops.Add(
		ops.Square(ops.Sub(a, x)),
		ops.Scale(ops.Square(ops.Sub(y, ops.Square(x))), 100)))
}

// Minimiser is a program that minimises a function f(x; a) of a 2-vector
// x from a start, for a scalar a fed at each run: Newton's method, with
// its stopping rule (|∇f| ≤ tol, at most maxNewtonSteps steps), runs
// inside one ops.While loop, and ops.Root, for which the minimiser is the
// root of ∇f, differentiates the result with respect to a twice, by the
// implicit function theorem rather than through the steps.
type Minimiser struct {
	a                 *graph.Node
	x, steps, dx, d2x *graph.Node
	machine           *vm.Machine
}

// NewMinimiser builds and compiles the program for f from start.
func NewMinimiser(f func(x, a *graph.Node) *graph.Node, start []float64, tol float64) (*Minimiser, error) {
	g := graph.New()
	m := &Minimiser{a: g.Input("a", graph.Float64)}
	x0, err := graph.FromFloat64s(graph.Float64, start, len(start))
	if err != nil {
		return nil, err
	}
	gradient := func(x *graph.Node) *graph.Node {
		d, err := compile.Grad(f(x, m.a), x)
		if err != nil {
			return x.Graph().Fail(err)
		}
		return d[0]
	}
	bound := g.Scalar(tol*tol, graph.Float64)
	newton := func(F ops.RootFunc, x0 *graph.Node) *graph.Node {
		final, steps := ops.While(func(c []*graph.Node) *graph.Node {
			return ops.Greater(ops.Sum(ops.Square(F(c[0]))), bound)
		}, func(c []*graph.Node) []*graph.Node {
			h, err := compile.Hessian(f(c[0], m.a), c[0])
			if err != nil {
				return []*graph.Node{c[0].Graph().Fail(err)}
			}
			step := ops.Solve(h, ops.Reshape(F(c[0]), len(start), 1))
			return []*graph.Node{ops.Sub(c[0], ops.Reshape(step, len(start)))}
		}, []*graph.Node{x0}, ops.MaxSteps(maxNewtonSteps))
		m.steps = ops.Cast(steps, graph.Float64)
		return final[0]
	}
	m.x = ops.Root(gradient, g.Const(x0), newton)
	// The minimiser's derivatives with respect to a: Jacobians of a
	// 2-vector with respect to a scalar, so two columns of forward mode.
	if m.dx, err = compile.Jacobian(m.x, m.a); err != nil {
		return nil, err
	}
	if m.d2x, err = compile.Jacobian(m.dx, m.a); err != nil {
		return nil, err
	}
	prog, err := compile.Compile([]*graph.Node{m.x, m.steps, m.dx, m.d2x})
	if err != nil {
		return nil, err
	}
	if m.machine, err = vm.New(prog); err != nil {
		return nil, err
	}
	return m, nil
}

// Solution is the minimiser for one a, the Newton steps the loop took and
// the minimiser's first and second derivatives with respect to a.
type Solution struct {
	X, DX, D2X []float64
	Steps      int
}

// At minimises for a.
func (m *Minimiser) At(a float64) (Solution, error) {
	av, err := graph.FromFloat64s(graph.Float64, []float64{a})
	if err != nil {
		return Solution{}, err
	}
	if err := m.machine.Run(vm.Feeds{m.a: av}); err != nil {
		return Solution{}, err
	}
	var vals [4][]float64
	for i, n := range []*graph.Node{m.x, m.steps, m.dx, m.d2x} {
		v, err := m.machine.Value(n)
		if err != nil {
			return Solution{}, err
		}
		vals[i] = graph.Float64s(v)
	}
	return Solution{X: vals[0], Steps: int(vals[1][0]), DX: vals[2], D2X: vals[3]}, nil
}

// Sensitivity is the minimiser at a, its derivatives from Root, and
// those of central differences of the minimiser at a ± h.
type Sensitivity struct {
	Solution
	FiniteDX, FiniteD2X []float64
}

// SensitivityAt solves at a, a − h and a + h.
func (m *Minimiser) SensitivityAt(a, h float64) (Sensitivity, error) {
	var s [3]Solution
	for i, v := range []float64{a, a - h, a + h} {
		var err error
		if s[i], err = m.At(v); err != nil {
			return Sensitivity{}, err
		}
	}
	r := Sensitivity{Solution: s[0]}
	for j := range s[0].X {
		r.FiniteDX = append(r.FiniteDX, (s[2].X[j]-s[1].X[j])/(2*h))
		r.FiniteD2X = append(r.FiniteD2X, (s[2].X[j]-2*s[0].X[j]+s[1].X[j])/(h*h))
	}
	return r, nil
}

// runSensitivity prints the shifted Rosenbrock function's minimiser at
// a = 1.5 and its derivatives with respect to a, from Root beside finite
// differences and the exact values, and fails unless they agree.
func runSensitivity(w io.Writer) error {
	m, err := NewMinimiser(ShiftedRosenbrock, rosenbrockStart, gradientTolerance)
	if err != nil {
		return err
	}
	s, err := m.SensitivityAt(sensitivityA, finiteStep)
	if err != nil {
		return err
	}
	a := sensitivityA
	fmt.Fprintf(w, "minimum of (a−x)² + 100(y−x²)² at a = %g: x = (%.15f, %.15f) after %d Newton steps in one While\n", a, s.X[0], s.X[1], s.Steps)
	rows := []struct {
		name            string
		root, fd, exact []float64
		tol             float64
	}{
		{"dx/da  ", s.DX, s.FiniteDX, []float64{1, 2 * a}, 1e-6},
		{"d²x/da²", s.D2X, s.FiniteD2X, []float64{0, 2}, 1e-3},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%s  Root (%.12f, %.12f)  finite differences (%.12f, %.12f)  exact (%g, %g)\n",
			r.name, r.root[0], r.root[1], r.fd[0], r.fd[1], r.exact[0], r.exact[1])
		for j := range r.exact {
			if math.Abs(r.root[j]-r.exact[j]) > 1e-9 || math.Abs(r.root[j]-r.fd[j]) > r.tol {
				return fmt.Errorf("%s: Root gives %v, finite differences %v, exactly %v", r.name, r.root, r.fd, r.exact)
			}
		}
	}
	if d := math.Hypot(s.X[0]-a, s.X[1]-a*a); !(d < minimumTolerance) {
		return fmt.Errorf("Newton's method ended at (%v, %v), %.3g from the minimum (%g, %g)", s.X[0], s.X[1], d, a, a*a)
	}
	return nil
}
