package main

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/optimize"
	"github.com/nabla-go/nabla/vm"
)

// Data is a 1-D regression data set: targets Y observed at inputs X.
type Data struct{ X, Y []float64 }

// Hyperparameters are θ = (log ℓ, log σf, log σn) of the kernel
// k(x, x') = σf² exp(−(x − x')²/(2ℓ²)), with noise of variance σn².
type Hyperparameters [3]float64

// thetaNames name θ's elements, for printing.
var thetaNames = [3]string{"log ℓ", "log σf", "log σn"}

// Model is the negative log marginal likelihood of a GP with the RBF kernel
// on a data set, as a graph of the parameter θ:
//
//	NLML(θ) = ½ yᵀK⁻¹y + ½ log|K| + n/2 log 2π,  Kᵢⱼ = k(xᵢ, xⱼ) + σn² δᵢⱼ,
//
// from K's Cholesky factor L: K⁻¹y by CholeskySolve, and log|K| as
// 2 Σ log Lᵢᵢ, which is LogDet(K) without factorising K a second time.
type Model struct {
	Theta *graph.Node // the parameter θ, float64(3)
	NLML  *graph.Node // the scalar NLML(θ)
}

// NewModel builds the NLML of d as a function of θ, starting at theta0.
func NewModel(d Data, theta0 Hyperparameters) (*Model, error) {
	if len(d.X) == 0 || len(d.X) != len(d.Y) {
		return nil, fmt.Errorf("gp: %d inputs and %d targets: want as many, at least one", len(d.X), len(d.Y))
	}
	g := graph.New()
	theta := g.Param("theta", constantValue(theta0[:], 3))
	n := len(d.X)
	l := ops.Cholesky(covariance(theta, d.X))
	y := g.Const(constantValue(d.Y, n, 1))
	fit := ops.Scale(ops.Sum(ops.Mul(y, ops.CholeskySolve(l, y))), 0.5)
	logDet := ops.Sum(ops.Log(ops.Diagonal(l))) // ½ log|K|
	nlml := ops.Add(ops.Add(fit, logDet), g.Scalar(float64(n)/2*math.Log(2*math.Pi), graph.Float64))
	if err := g.Err(); err != nil {
		return nil, err
	}
	return &Model{Theta: theta, NLML: nlml}, nil
}

// constantValue is vals as a float64 tensor of the shape.
func constantValue(vals []float64, shape ...int) *tensor.Dense {
	t, _ := graph.FromFloat64s(graph.Float64, vals, shape...)
	return t
}

// thetaPart is θᵢ as a scalar node.
func thetaPart(theta *graph.Node, i int) *graph.Node {
	return ops.Reshape(ops.Slice(theta, 0, i, i+1))
}

// kernel is the matrix k(aᵢ, bⱼ) = σf² exp(−(aᵢ − bⱼ)²/(2ℓ²)) of θ.
func kernel(theta *graph.Node, a, b []float64) *graph.Node {
	sq := make([]float64, 0, len(a)*len(b))
	for _, ai := range a {
		for _, bj := range b {
			sq = append(sq, (ai-bj)*(ai-bj))
		}
	}
	d := theta.Graph().Const(constantValue(sq, len(a), len(b)))
	invLength2 := ops.Exp(ops.Scale(thetaPart(theta, 0), -2)) // 1/ℓ²
	signal2 := ops.Exp(ops.Scale(thetaPart(theta, 1), 2))     // σf²
	return ops.Mul(signal2, ops.Exp(ops.Mul(ops.Scale(d, -0.5), invLength2)))
}

// covariance is K = k(X, X) + σn² I.
func covariance(theta *graph.Node, x []float64) *graph.Node {
	noise2 := ops.Exp(ops.Scale(thetaPart(theta, 2), 2))
	return ops.Add(kernel(theta, x, x), ops.Mul(noise2, ops.Eye(theta.Graph(), graph.Float64, len(x))))
}

// Fit minimises the NLML over θ by Newton's method with its exact Hessian.
func (m *Model) Fit(opts ...optimize.Option) (optimize.Result, error) {
	return optimize.Minimize(m.NLML, m.Theta, optimize.Newton, opts...)
}

// Derivatives evaluates the NLML, its gradient and its 3×3 Hessian at any
// θ, from one compiled program.
type Derivatives struct {
	m       *Model
	grad    *graph.Node
	hessian *graph.Node
	machine *vm.Machine
}

// NewDerivatives differentiates the model's NLML twice and compiles the three.
func (m *Model) NewDerivatives(opts ...vm.Option) (*Derivatives, error) {
	grads, err := compile.Grad(m.NLML, m.Theta)
	if err != nil {
		return nil, err
	}
	// The Hessian as the Jacobian of this gradient, in forward mode (what
	// compile.Hessian builds), so that the program computes the gradient
	// once: compile.Hessian would differentiate f again, and the two
	// gradients' constants (the seeds folded into tensors) keep them apart.
	h, err := compile.JacobianWith(grads[0], m.Theta, compile.Forward)
	if err != nil {
		return nil, err
	}
	prog, err := compile.Compile([]*graph.Node{m.NLML, grads[0], h})
	if err != nil {
		return nil, err
	}
	machine, err := vm.New(prog, opts...)
	if err != nil {
		return nil, err
	}
	return &Derivatives{m: m, grad: grads[0], hessian: h, machine: machine}, nil
}

// At returns NLML(θ), ∇NLML(θ) and the Hessian at θ.
func (d *Derivatives) At(theta Hyperparameters) (f float64, grad [3]float64, hess [3][3]float64, err error) {
	if err = d.Run(theta); err != nil {
		return
	}
	if f, err = d.machine.Scalar(d.m.NLML); err != nil {
		return
	}
	g, err := d.machine.Value(d.grad)
	if err != nil {
		return
	}
	h, err := d.machine.Value(d.hessian)
	if err != nil {
		return
	}
	copy(grad[:], graph.Float64s(g))
	hv := graph.Float64s(h)
	for i := range hess {
		copy(hess[i][:], hv[3*i:3*i+3])
	}
	return f, grad, hess, nil
}

// Run computes the three at θ without reading them back (for timing).
func (d *Derivatives) Run(theta Hyperparameters) error {
	if err := d.machine.Set(d.m.Theta, constantValue(theta[:], 3)); err != nil {
		return err
	}
	return d.machine.Run(nil)
}

// Laplace is the Laplace approximation of θ's posterior under a flat
// prior: N(θ̂, H⁻¹) with H the NLML's Hessian at its minimum θ̂.
type Laplace struct {
	Mean       Hyperparameters
	Covariance [3][3]float64
	SD         [3]float64 // √ of the covariance's diagonal
}

// NewLaplace inverts the Hessian h at the minimum theta.
func NewLaplace(theta Hyperparameters, h [3][3]float64) (Laplace, error) {
	sym := mat.NewSymDense(3, nil)
	for i := range 3 {
		for j := i; j < 3; j++ {
			sym.SetSym(i, j, (h[i][j]+h[j][i])/2)
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(sym) {
		return Laplace{}, errors.New("gp: the Hessian at the optimum is not positive-definite: not a minimum")
	}
	var inv mat.SymDense
	if err := chol.InverseTo(&inv); err != nil {
		return Laplace{}, fmt.Errorf("gp: inverting the Hessian: %w", err)
	}
	l := Laplace{Mean: theta}
	for i := range 3 {
		for j := range 3 {
			l.Covariance[i][j] = inv.At(i, j)
		}
		l.SD[i] = math.Sqrt(inv.At(i, i))
	}
	return l, nil
}

// Predict returns the posterior mean and standard deviation of the latent
// function at the inputs xs, given the data and θ:
// mean = k(xs, X) K⁻¹ y, variance = σf² − diag(k(xs, X) K⁻¹ k(X, xs)).
func Predict(d Data, theta Hyperparameters, xs []float64) (mean, sd []float64, err error) {
	g := graph.New()
	th := g.Const(constantValue(theta[:], 3))
	l := ops.Cholesky(covariance(th, d.X))
	ks := kernel(th, d.X, xs)                                // (n, m)
	v := ops.TriangularSolve(l, ks, ops.TriangularOptions{}) // L⁻¹ k(X, xs)
	alpha := ops.CholeskySolve(l, g.Const(constantValue(d.Y, len(d.Y), 1)))
	meanNode := ops.Sum(ops.Mul(ks, alpha), 0)
	signal2 := ops.Exp(ops.Scale(thetaPart(th, 1), 2))
	variance := ops.Sub(signal2, ops.Sum(ops.Square(v), 0))
	vals, err := vm.Eval(nil, meanNode, variance)
	if err != nil {
		return nil, nil, err
	}
	mean, sd = graph.Float64s(vals[0]), graph.Float64s(vals[1])
	for i, v := range sd {
		sd[i] = math.Sqrt(math.Max(v, 0)) // rounding may leave −1e-17
	}
	return mean, sd, nil
}
