package nn

import (
	"math"
	"slices"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// adamReference runs Adam (or AdamW, when decoupled) for n steps on
// f(p) = Σ a_i p_i², gradient 2·a_i·p_i, one element at a time, as
// PyTorch's torch.optim.Adam and AdamW write it.
func adamReference(p, a []float64, lr, beta1, beta2, eps, wd float64, decoupled bool, n int) []float64 {
	p = slices.Clone(p)
	m, v := make([]float64, len(p)), make([]float64, len(p))
	for t := 1; t <= n; t++ {
		for i := range p {
			g := 2 * a[i] * p[i]
			if decoupled {
				p[i] *= 1 - lr*wd
			} else {
				g += wd * p[i]
			}
			m[i] = beta1*m[i] + (1-beta1)*g
			v[i] = beta2*v[i] + (1-beta2)*g*g
			denom := math.Sqrt(v[i])/math.Sqrt(1-math.Pow(beta2, float64(t))) + eps
			p[i] -= lr / (1 - math.Pow(beta1, float64(t))) * m[i] / denom
		}
	}
	return p
}

// The literal AdamConfig{LR: 3e-3} is PyTorch's Adam(lr=3e-3) (and AdamW's),
// DefaultAdam's configuration; zeros given with the With methods, or set
// in DefaultAdam's fields, stay zero. The last parameter has no gradient,
// as an unused bias: with PyTorch's eps it does not move (AdamW decays
// it); with eps given as 0 it becomes 0/0.
func TestAdamConfigDefaults(t *testing.T) {
	const lr, n = 3e-3, 20
	start, a := []float64{1, -0.5, 0.7}, []float64{1, 3, 0}
	loss := func(p *graph.Node) *graph.Node {
		av := p.Graph().Const(dense(t, a, len(a)))
		return ops.Sum(ops.Mul(av, ops.Square(p)))
	}
	zeroed := DefaultAdam().WithLR(lr)
	zeroed.Beta1, zeroed.Beta2, zeroed.WeightDecay = 0, 0, 0
	for _, c := range []struct {
		name              string
		opt               Optimizer
		beta1, beta2, eps float64
		wd                float64
		decoupled         bool
	}{
		{"Adam literal", NewAdam(AdamConfig{LR: lr}), 0.9, 0.999, 1e-8, 0, false},
		{"DefaultAdam", NewAdam(DefaultAdam().WithLR(lr)), 0.9, 0.999, 1e-8, 0, false},
		{"Adam literal with decay", NewAdam(AdamConfig{LR: lr, WeightDecay: 0.1}), 0.9, 0.999, 1e-8, 0.1, false},
		{"Adam literal with beta2", NewAdam(AdamConfig{LR: lr, Beta2: 0.99}), 0.9, 0.99, 1e-8, 0, false},
		{"AdamW literal", NewAdamW(AdamConfig{LR: lr}), 0.9, 0.999, 1e-8, 0.01, true},
		{"DefaultAdamW", NewAdamW(DefaultAdamW().WithLR(lr)), 0.9, 0.999, 1e-8, 0.01, true},
		{"AdamW from DefaultAdam", NewAdamW(DefaultAdam().WithLR(lr)), 0.9, 0.999, 1e-8, 0, true},
		{"AdamW without decay", NewAdamW(AdamConfig{LR: lr}.WithWeightDecay(0)), 0.9, 0.999, 1e-8, 0, true},
		{"zero betas given", NewAdam(AdamConfig{LR: lr}.WithBetas(0, 0)), 0, 0, 1e-8, 0, false},
		{"zero betas in DefaultAdam", NewAdam(zeroed), 0, 0, 1e-8, 0, false},
		{"zero eps given", NewAdam(AdamConfig{LR: lr}.WithEps(0)), 0.9, 0.999, 0, 0, false},
	} {
		m, p := trainer(t, c.opt, start, loss)
		got := steps(t, m, p, n)
		want := adamReference(start, a, lr, c.beta1, c.beta2, c.eps, c.wd, c.decoupled, n)
		if c.eps == 0 {
			if !math.IsNaN(got[2]) || !math.IsNaN(want[2]) {
				t.Fatalf("%s: the parameter without gradient is %v, want NaN (reference %v)", c.name, got[2], want[2])
			}
			got, want = got[:2], want[:2]
		}
		assertClose(t, c.name, got, want, 1e-12)
	}
}

// FoldCorrection's step is Kingma & Ba's efficient order: on f(p) = Σ a_i
// p_i, whose gradient a is exact, the parameters are bit for bit those of
// the folded step written out one element at a time (with decoupled decay
// too), and within rounding of PyTorch's form.
func TestAdamFoldCorrection(t *testing.T) {
	const lr, eps, n = 3e-2, 1e-3, 20 // a large eps, so that its scaling shows
	start, a := []float64{1, -0.5, 0.7}, []float64{1, 3, 0.25}
	loss := func(p *graph.Node) *graph.Node {
		return ops.Sum(ops.Mul(p.Graph().Const(dense(t, a, len(a))), p))
	}
	for _, decoupled := range []bool{false, true} {
		cfg := DefaultAdam().WithLR(lr).WithEps(eps)
		newOpt := NewAdam
		if decoupled {
			cfg, newOpt = cfg.WithWeightDecay(0.1), NewAdamW
		}
		m, p := trainer(t, newOpt(cfg), start, loss)
		pytorch := steps(t, m, p, n)
		cfg.FoldCorrection = true
		m, p = trainer(t, newOpt(cfg), start, loss)
		got := steps(t, m, p, n)

		// Variables, not constants: Go folds 1-0.9 exactly, the graph in
		// float64.
		lrv, beta1, beta2, wd := lr, 0.9, 0.999, 0.1
		want := slices.Clone(start)
		mom, v := make([]float64, len(want)), make([]float64, len(want))
		for step := 1.0; step <= n; step++ {
			c2 := math.Sqrt(1 - math.Pow(beta2, step))
			stepSize, epsC := lrv/(1-math.Pow(beta1, step))*c2, eps*c2
			for i, g := range a {
				base := want[i]
				if decoupled {
					base *= 1 - lrv*wd
				}
				mom[i] = mom[i]*beta1 + g*(1-beta1)
				v[i] = v[i]*beta2 + g*g*(1-beta2)
				want[i] = base - stepSize*(mom[i]/(math.Sqrt(v[i])+epsC))
			}
		}
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("decoupled %v: element %d: got %v, want %v bit for bit", decoupled, i, got[i], want[i])
			}
		}
		assertClose(t, "folded against PyTorch's form", got, pytorch, 1e-13)
	}
}
