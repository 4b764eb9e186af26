package main

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Result is a function's value, gradient and Hessian at a point.
type Result struct {
	X       []float64   `json:"x"`
	F       float64     `json:"f"`
	Grad    []float64   `json:"grad"`
	Hessian [][]float64 `json:"hessian"`
}

// Evaluator computes a function of a vector with its gradient and Hessian,
// compiled once into one program and run at any point.
type Evaluator struct {
	dim     int
	x       *graph.Node
	outputs [3]*graph.Node // f, ∇f, ∇²f
	machine *vm.Machine
	feed    vm.Feeds
}

// NewEvaluator builds f from an input vector of dim elements (f must return
// a scalar), differentiates it twice and compiles the three.
func NewEvaluator(dim int, f func(x *graph.Node) *graph.Node) (*Evaluator, error) {
	g := graph.New()
	x := g.Input("x", graph.Float64, dim)
	y := f(x)
	grad, err := compile.Grad(y, x)
	if err != nil {
		return nil, err
	}
	hessian, err := compile.Hessian(y, x)
	if err != nil {
		return nil, err
	}
	e := &Evaluator{dim: dim, x: x, outputs: [3]*graph.Node{y, grad[0], hessian}}
	prog, err := compile.Compile(e.outputs[:])
	if err != nil {
		return nil, err
	}
	if e.machine, err = vm.New(prog); err != nil {
		return nil, err
	}
	e.feed = vm.Feeds{x: graph.NewDense(graph.Float64, dim)}
	return e, nil
}

// At evaluates the function, its gradient and its Hessian at x.
func (e *Evaluator) At(x []float64) (Result, error) {
	if len(x) != e.dim {
		return Result{}, fmt.Errorf("point has %d coordinates, want %d", len(x), e.dim)
	}
	copy(e.feed[e.x].Float64s(), x)
	if err := e.machine.Run(e.feed); err != nil {
		return Result{}, err
	}
	var values [3][]float64
	for i, n := range e.outputs {
		v, err := e.machine.Value(n)
		if err != nil {
			return Result{}, err
		}
		values[i] = graph.Float64s(v)
	}
	r := Result{X: append([]float64(nil), x...), F: values[0][0], Grad: values[1]}
	for i := range e.dim {
		r.Hessian = append(r.Hessian, values[2][i*e.dim:(i+1)*e.dim])
	}
	return r, nil
}

// Example is f(x) = sum(sin(x)·x³) + log(1 + sum(x²)).
func Example(x *graph.Node) *graph.Node {
	return ops.Add(
		ops.Sum(ops.Mul(ops.Sin(x), ops.PowConst(x, 3))),
		ops.Log1p(ops.Sum(ops.Square(x))))
}

// ExamplePoint is where Evaluate's default run evaluates Example.
var ExamplePoint = []float64{0.5, -1.2, 2.0, 0.3}

// Evaluate returns Example's value, gradient and Hessian at x.
func Evaluate(x []float64) (Result, error) {
	e, err := NewEvaluator(len(x), Example)
	if err != nil {
		return Result{}, err
	}
	return e.At(x)
}

// Rosenbrock is (1−x)² + 100(y−x²)² of the 2-vector (x, y): its minimum
// (1, 1) sits at the end of a long curved valley.
func Rosenbrock(p *graph.Node) *graph.Node {
	x, y := ops.Slice(p, 0, 0, 1), ops.Slice(p, 0, 1, 2)
	one := p.Graph().Scalar(1, p.DType())
	return ops.Sum(ops.Add(
		ops.Square(ops.Sub(one, x)),
		ops.Scale(ops.Square(ops.Sub(y, ops.Square(x))), 100)))
}

// Newton minimises e's function by Newton's method from start,
// x ← x − H⁻¹∇f, calling visit with every iterate (start included). It
// stops when the gradient's norm is at most tol, and fails after maxIter
// steps or at a singular Hessian.
func Newton(e *Evaluator, start []float64, tol float64, maxIter int, visit func(k int, r Result)) ([]float64, error) {
	x := append([]float64(nil), start...)
	for k := 0; ; k++ {
		r, err := e.At(x)
		if err != nil {
			return nil, err
		}
		visit(k, r)
		if norm(r.Grad) <= tol {
			return x, nil
		}
		if k == maxIter {
			return nil, fmt.Errorf("Newton's method: |∇f| = %.3g after %d steps, want at most %.3g", norm(r.Grad), k, tol)
		}
		step, err := solve(r.Hessian, r.Grad)
		if err != nil {
			return nil, fmt.Errorf("Newton's method, step %d: %v", k+1, err)
		}
		for i := range x {
			x[i] -= step[i]
		}
	}
}

// solve returns the solution s of H·s = g, through an LU factorisation.
func solve(h [][]float64, g []float64) ([]float64, error) {
	n := len(g)
	hm := mat.NewDense(n, n, nil)
	for i, row := range h {
		hm.SetRow(i, row)
	}
	var s mat.VecDense
	if err := s.SolveVec(hm, mat.NewVecDense(n, append([]float64(nil), g...))); err != nil {
		return nil, fmt.Errorf("solving with the Hessian: %v", err)
	}
	return s.RawVector().Data, nil
}

func norm(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}
