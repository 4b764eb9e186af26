package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Problem is a damped oscillator, d²x/dt² = -k·x - c·dx/dt, started at X0 with
// velocity V0 and integrated by Steps steps of RK4 of length DT; x is
// observed every Every steps.
type Problem struct {
	X0, V0 float64
	DT     float64
	Steps  int
	Every  int
}

// DefaultProblem integrates 10 time units in 1000 steps, observed every 10.
var DefaultProblem = Problem{X0: 1, V0: 0, DT: 0.01, Steps: 1000, Every: 10}

// Observations is the number of observed steps.
func (p Problem) Observations() int { return p.Steps / p.Every }

// Trajectory integrates the oscillator with parameters (k, c) in plain Go
// and returns x after each step: the reference the graph is checked
// against, and the source of the synthetic observations.
func (p Problem) Trajectory(k, c float64) []float64 {
	f := func(x, v float64) (float64, float64) { return v, -k*x - c*v }
	x, v := p.X0, p.V0
	xs := make([]float64, p.Steps)
	h := p.DT
	for t := range xs {
		k1x, k1v := f(x, v)
		k2x, k2v := f(x+h/2*k1x, v+h/2*k1v)
		k3x, k3v := f(x+h/2*k2x, v+h/2*k2v)
		k4x, k4v := f(x+h*k3x, v+h*k3v)
		x += h / 6 * (k1x + 2*k2x + 2*k3x + k4x)
		v += h / 6 * (k1v + 2*k2v + 2*k3v + k4v)
		xs[t] = x
	}
	return xs
}

// Observe returns x at every Every-th step of the trajectory with
// parameters (k, c), plus Gaussian noise of standard deviation sigma
// (seeded).
func (p Problem) Observe(k, c, sigma float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	xs := p.Trajectory(k, c)
	obs := make([]float64, p.Observations())
	for i := range obs {
		obs[i] = xs[(i+1)*p.Every-1] + sigma*rng.NormFloat64()
	}
	return obs
}

// Model is the oscillator as a graph: the parameters (k, c), the
// trajectory of x computed by a Scan of RK4 steps, and the mean squared
// error against the observations.
type Model struct {
	Graph  *graph.Graph
	Params *graph.Node // (k, c)
	X      *graph.Node // x after each step, (Steps)
	Loss   *graph.Node
}

// Build makes the model with parameters starting at (k, c).
func (p Problem) Build(k, c float64, obs []float64) (*Model, error) {
	if p.Steps <= 0 || p.Every <= 0 || p.Steps%p.Every != 0 || len(obs) != p.Observations() {
		return nil, fmt.Errorf("ode: %d steps observed every %d with %d observations", p.Steps, p.Every, len(obs))
	}
	g := graph.New()
	init, err := graph.FromFloat64s(graph.Float64, []float64{k, c}, 2)
	if err != nil {
		return nil, err
	}
	params := g.Param("params", init)
	start, err := graph.FromFloat64s(graph.Float64, []float64{p.X0, p.V0}, 2)
	if err != nil {
		return nil, err
	}
	kk, cc := ops.Slice(params, 0, 0, 1), ops.Slice(params, 0, 1, 2)
	// f is the oscillator's vector field at state s = (x, v).
	f := func(s *graph.Node) *graph.Node {
		x, v := ops.Slice(s, 0, 0, 1), ops.Slice(s, 0, 1, 2)
		return ops.Concat(0, v, ops.Neg(ops.Add(ops.Mul(kk, x), ops.Mul(cc, v))))
	}
	h := p.DT
	_, ys := ops.Scan(func(carry, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
		s := carry[0]
		k1 := f(s)
		k2 := f(ops.Add(s, ops.Scale(k1, h/2)))
		k3 := f(ops.Add(s, ops.Scale(k2, h/2)))
		k4 := f(ops.Add(s, ops.Scale(k3, h)))
		sum := ops.Add(ops.Add(k1, ops.Scale(ops.Add(k2, k3), 2)), k4)
		next := ops.Add(s, ops.Scale(sum, h/6))
		return []*graph.Node{next}, []*graph.Node{ops.Slice(next, 0, 0, 1)}
	}, []*graph.Node{g.Const(start)}, nil, ops.Steps(p.Steps))
	xs := ops.Reshape(ys[0], p.Steps)
	n := p.Observations()
	seen := ops.Reshape(ops.Slice(ops.Reshape(xs, n, p.Every), 1, p.Every-1, p.Every), n)
	target, err := graph.FromFloat64s(graph.Float64, obs, n)
	if err != nil {
		return nil, err
	}
	loss := ops.Scale(ops.Sum(ops.Square(ops.Sub(seen, g.Const(target)))), 1/float64(n))
	if err := g.Err(); err != nil {
		return nil, err
	}
	return &Model{Graph: g, Params: params, X: xs, Loss: loss}, nil
}

// maxRelDiff is the largest |a-b| / max(1, |b|) over the entries.
func maxRelDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(a[i]-b[i])/max(1, math.Abs(b[i])))
	}
	return d
}
