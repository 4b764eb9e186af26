package main

import (
	"fmt"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/vm"
)

// Result is a fit's parameters and final error.
type Result struct {
	K, C, Loss float64
}

// Fit runs iters Adam steps on the model's parameters from (k, c), calling
// report before the first step and after each.
func Fit(p Problem, obs []float64, k, c float64, iters int, lr float64, report func(it int, loss, k, c float64)) (Result, error) {
	m, err := p.Build(k, c, obs)
	if err != nil {
		return Result{}, err
	}
	updates, err := nn.NewAdam(nn.DefaultAdam().WithLR(lr)).Updates(m.Loss, []nn.Named{{Name: "params", Node: m.Params}})
	if err != nil {
		return Result{}, err
	}
	step, err := compile.Compile([]*graph.Node{m.Loss}, compile.WithUpdates(updates))
	if err != nil {
		return Result{}, err
	}
	machine, err := vm.New(step)
	if err != nil {
		return Result{}, err
	}
	var res Result
	for it := 0; it <= iters; it++ {
		before, err := machine.Get(m.Params)
		if err != nil {
			return Result{}, err
		}
		kc := graph.Float64s(before)
		if err := machine.Run(nil); err != nil {
			return Result{}, err
		}
		loss, err := machine.Scalar(m.Loss)
		if err != nil {
			return Result{}, err
		}
		res = Result{K: kc[0], C: kc[1], Loss: loss}
		if report != nil {
			report(it, loss, kc[0], kc[1])
		}
	}
	return res, nil
}

// Hessian returns the Hessian of the model's error with respect to (k, c)
// at the given point, row-major, built by differentiating the gradient
// through the Scan, and central finite differences of the gradient.
func (p Problem) Hessian(obs []float64, k, c float64) (hessian, fd []float64, err error) {
	m, err := p.Build(k, c, obs)
	if err != nil {
		return nil, nil, err
	}
	grad, err := compile.Grad(m.Loss, m.Params)
	if err != nil {
		return nil, nil, err
	}
	hess, err := compile.Hessian(m.Loss, m.Params)
	if err != nil {
		return nil, nil, err
	}
	prog, err := compile.Compile([]*graph.Node{grad[0], hess})
	if err != nil {
		return nil, nil, err
	}
	machine, err := vm.New(prog)
	if err != nil {
		return nil, nil, err
	}
	gradAt := func(k, c float64) ([]float64, error) {
		v, err := graph.FromFloat64s(graph.Float64, []float64{k, c}, 2)
		if err != nil {
			return nil, err
		}
		if err := machine.Set(m.Params, v); err != nil {
			return nil, err
		}
		if err := machine.Run(nil); err != nil {
			return nil, err
		}
		g, err := machine.Value(grad[0])
		if err != nil {
			return nil, err
		}
		return graph.Float64s(g), nil
	}
	if _, err := gradAt(k, c); err != nil {
		return nil, nil, err
	}
	h, err := machine.Value(hess)
	if err != nil {
		return nil, nil, err
	}
	hessian = graph.Float64s(h)
	const eps = 1e-5
	fd = make([]float64, 4)
	for j, d := range [][2]float64{{eps, 0}, {0, eps}} {
		plus, err := gradAt(k+d[0], c+d[1])
		if err != nil {
			return nil, nil, err
		}
		minus, err := gradAt(k-d[0], c-d[1])
		if err != nil {
			return nil, nil, err
		}
		for i := range 2 {
			fd[2*i+j] = (plus[i] - minus[i]) / (2 * eps)
		}
	}
	if len(hessian) != 4 {
		return nil, nil, fmt.Errorf("Hessian has %d entries, want 4", len(hessian))
	}
	return hessian, fd, nil
}
