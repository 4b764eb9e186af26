package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/parallel"
	"github.com/nabla-go/nabla/internal/kernel/vek"
)

// adamExpr is Adam's step as nn.Adam builds it, as fused steps over the
// inputs m, g, v, correction, eps, step size, p and (with a decay) the
// decay's factor, in that order, with the outputs m1, v1 and p1.
func adamExpr(dtype tensor.Dtype, n int, mode vek.AdamDecay) ([]graph.Type, []FusedStep, []int) {
	types, steps, outputs, _ := adamExprOf(dtype, n, mode, false)
	return types, steps, outputs
}

// adamExprOf is adamExpr, or with folded AdamConfig.FoldCorrection's form
// (no correction: its input left out, v1's root not divided), and the
// inputs' indices by name.
func adamExprOf(dtype tensor.Dtype, n int, mode vek.AdamDecay, folded bool) ([]graph.Type, []FusedStep, []int, map[string]int) {
	full, one := graph.TypeOf(dtype, n), graph.TypeOf(dtype)
	idx := map[string]int{}
	var types []graph.Type
	for _, name := range []string{"m", "g", "v", "corr", "eps", "s", "p", "decay"} {
		if (name == "corr" && folded) || (name == "decay" && mode == vek.NoDecay) {
			continue
		}
		idx[name] = len(types)
		ty := one
		if len(name) == 1 && name != "s" {
			ty = full
		}
		types = append(types, ty)
	}
	in := len(types)
	var steps []FusedStep
	add := func(op graph.Op, args ...int) int {
		steps = append(steps, FusedStep{Op: op, Args: args})
		return in + len(steps) - 1
	}
	m, g, v, eps, s, p, decay := idx["m"], idx["g"], idx["v"], idx["eps"], idx["s"], idx["p"], idx["decay"]
	if mode == vek.L2Decay {
		g = add(binary{addKind}, g, add(binary{mulKind}, p, decay))
	}
	m1 := add(binary{addKind}, add(unary{kind: scaleKind, c: 0.9}, m), add(unary{kind: scaleKind, c: 0.1}, g))
	v1 := add(binary{addKind}, add(unary{kind: scaleKind, c: 0.999}, v), add(unary{kind: scaleKind, c: 0.001}, add(unary{kind: squareKind}, g)))
	root := add(unary{kind: sqrtKind}, v1)
	if !folded {
		root = add(binary{divKind}, root, idx["corr"])
	}
	denom := add(binary{addKind}, root, eps)
	delta := add(binary{mulKind}, s, add(binary{divKind}, m1, denom))
	base := p
	if mode == vek.DecoupledDecay {
		base = add(binary{mulKind}, p, decay)
	}
	p1 := add(binary{subKind}, base, delta)
	return types, steps, []int{m1 - in, v1 - in, p1 - in}, idx
}

// TestFusedAdam: a fused op whose expression is Adam's step runs as one
// pass (vek.Adam) and gives the same bits as the steps run one at a time,
// into fresh outputs and in place, on any number of threads, also in
// AdamConfig.FoldCorrection's form (no division by the correction).
func TestFusedAdam(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		mode vek.AdamDecay
		name string
	}{{vek.NoDecay, "Adam"}, {vek.L2Decay, "Adam+L2"}, {vek.DecoupledDecay, "AdamW"}} {
		for _, dtype := range []tensor.Dtype{graph.Float32, graph.Float64} {
			for _, nf := range []struct {
				n      int
				folded bool
			}{{1, false}, {7, false}, {300, false}, {70000, false}, {7, true}, {300, true}, {70000, true}} {
				n := nf.n
				types, steps, outputs, idx := adamExprOf(dtype, n, c.mode, nf.folded)
				op, err := NewFused(types, steps, outputs...)
				if err != nil {
					t.Fatal(err)
				}
				if op.OnePass() != c.name {
					t.Fatalf("%v: Adam's expression (%s, folded %v) is not recognised: %q", op, c.name, nf.folded, op.OnePass())
				}
				stepwise := *op
				stepwise.adam = nil
				in := make([]*tensor.Dense, len(types))
				for i, ty := range types {
					in[i] = randomDense(rng, dtype, ty.Shape...)
				}
				if !nf.folded {
					graph.SetFloat(in[idx["corr"]], 0, 0.0447) // the correction: v1's root over it
				}
				graph.SetFloat(in[idx["eps"]], 0, 1e-8)
				if c.mode != vek.NoDecay {
					graph.SetFloat(in[idx["decay"]], 0, 0.999)
				}
				for i := 0; i < n; i += 97 { // and a few NaNs and infinities
					graph.SetFloat(in[i%3], i, [...]float64{math.NaN(), math.Inf(1), -math.Inf(1)}[i%3])
				}
				run := func(op *FusedOp, threads int, inPlace bool) []*tensor.Dense {
					ins := make([]*tensor.Dense, len(in))
					for i := range in {
						ins[i], _ = graph.CloneDense(in[i])
					}
					outs := []*tensor.Dense{graph.NewDense(dtype, n), graph.NewDense(dtype, n), graph.NewDense(dtype, n)}
					if inPlace {
						outs = []*tensor.Dense{ins[idx["m"]], ins[idx["v"]], ins[idx["p"]]}
					}
					var e *graph.Exec
					if threads > 1 {
						pool := parallel.New(threads)
						defer pool.Close()
						e = graph.NewExec(pool)
					}
					if err := op.Multi().ForwardExec(e, outs, ins); err != nil {
						t.Fatal(err)
					}
					return outs
				}
				want := run(&stepwise, 1, false)
				for _, threads := range []int{1, 2} {
					for _, inPlace := range []bool{false, true} {
						got := run(op, threads, inPlace)
						for k := range got {
							for i := range n {
								g, w := graph.Float(got[k], i), graph.Float(want[k], i)
								if math.Float64bits(g) != math.Float64bits(w) {
									t.Fatalf("%s %v n=%d folded=%v threads=%d in place=%v: output %d [%d]: got %v, want %v", c.name, dtype, n, nf.folded, threads, inPlace, k, i, g, w)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestFusedAdamOnlyAdam: expressions that differ from Adam's step in any
// part run step by step.
func TestFusedAdamOnlyAdam(t *testing.T) {
	change := map[string]func(ty []graph.Type, s []FusedStep) ([]graph.Type, []FusedStep){
		"p + Δ": func(ty []graph.Type, s []FusedStep) ([]graph.Type, []FusedStep) {
			s[12].Op = binary{addKind}
			return ty, s
		},
		"Δ - p": func(ty []graph.Type, s []FusedStep) ([]graph.Type, []FusedStep) {
			s[12].Args = []int{18, 6}
			return ty, s
		},
		"m1 over v's root": func(ty []graph.Type, s []FusedStep) ([]graph.Type, []FusedStep) {
			s[10].Args = []int{16, 9}
			return ty, s
		},
		"no square": func(ty []graph.Type, s []FusedStep) ([]graph.Type, []FusedStep) {
			s[4].Op = unary{kind: absKind}
			return ty, s
		},
		"m's moment from v": func(ty []graph.Type, s []FusedStep) ([]graph.Type, []FusedStep) { s[0].Args = []int{2}; return ty, s },
		"the square of m":   func(ty []graph.Type, s []FusedStep) ([]graph.Type, []FusedStep) { s[4].Args = []int{0}; return ty, s },
		"a vector of eps": func(ty []graph.Type, s []FusedStep) ([]graph.Type, []FusedStep) {
			ty[4] = ty[0]
			return ty, s
		},
	}
	for name, f := range change {
		types, steps, outputs := adamExpr(graph.Float64, 10, vek.NoDecay)
		types, steps = f(types, steps)
		op, err := NewFused(types, steps, outputs...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if op.OnePass() != "" {
			t.Errorf("%s: taken for Adam's step", name)
		}
	}
	// The decays: L2's of p alone, AdamW's a product.
	types, steps, outputs := adamExpr(graph.Float64, 10, vek.L2Decay)
	steps[0].Args = []int{0, 7} // m·decay
	if op, err := NewFused(types, steps, outputs...); err != nil || op.OnePass() != "" {
		t.Errorf("L2 decay of m: %v, taken for %q", err, op.OnePass())
	}
	types, steps, outputs = adamExpr(graph.Float64, 10, vek.DecoupledDecay)
	steps[len(steps)-2].Op = binary{addKind} // p + decay
	if op, err := NewFused(types, steps, outputs...); err != nil || op.OnePass() != "" {
		t.Errorf("p + decay: %v, taken for %q", err, op.OnePass())
	}
	// The folded form with no root of v1 under eps.
	types, steps, outputs, _ = adamExprOf(graph.Float64, 10, vek.NoDecay, true)
	steps[7].Op = unary{kind: absKind} // |v1| for √v1
	if op, err := NewFused(types, steps, outputs...); err != nil || op.OnePass() != "" {
		t.Errorf("folded, no root: %v, taken for %q", err, op.OnePass())
	}
	// Only the outputs m1, v1 and p1, in any order.
	types, steps, _ = adamExpr(graph.Float32, 10, vek.NoDecay)
	for _, outputs := range [][]int{{12, 6, 2}, {12}, {2, 12}} {
		op, err := NewFused(types, steps, outputs...)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := op.adam != nil, len(outputs) == 3; got != want {
			t.Errorf("outputs %v: recognised %v, want %v", outputs, got, want)
		}
	}
}
