package vm_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// bodyModels build, from x (n, 4, 3) and parameters p (3) and q (1, 3)
// whose shapes do not hold the batch, outputs computed in the bodies of
// Scan, Cond and While (the branches of a Cond inside a Scan's body
// included, and functions computing on parameters and constants alone):
// each runs at every batch size.
var bodyModels = map[string]func(x, p, q *graph.Node) []*graph.Node{
	"Scan": func(x, p, q *graph.Node) []*graph.Node {
		seq := ops.Transpose(x, 1, 0, 2) // (4, n, 3)
		h0 := ops.Mul(ops.Reshape(ops.Slice(x, 1, 0, 1), -1, 3), p)
		final, ys := ops.Scan(func(c, s []*graph.Node) ([]*graph.Node, []*graph.Node) {
			h := ops.Tanh(ops.Add(ops.Mul(c[0], p), s[0]))
			return []*graph.Node{h}, []*graph.Node{ops.Add(s[0], q), ops.Reshape(s[0], -1, 1, 3)}
		}, []*graph.Node{h0}, []*graph.Node{seq})
		return append(final, ys...)
	},
	"Cond": func(x, p, q *graph.Node) []*graph.Node {
		flat := ops.Reshape(x, -1, 12)
		return ops.Cond(ops.Greater(ops.Mean(x), ops.Mean(p)), func(o []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Add(ops.Reshape(o[0], -1, 3), q)}
		}, func(o []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Mul(ops.Reshape(o[0], -1, 3), p)}
		}, []*graph.Node{flat})
	},
	"While": func(x, p, q *graph.Node) []*graph.Node {
		h := ops.Reshape(ops.Slice(x, 1, 0, 1), -1, 3)
		bound := ops.Sum(ops.Abs(p)) // built outside: the loop reads the same node at every size
		final, steps := ops.While(func(c []*graph.Node) *graph.Node {
			return ops.Less(ops.Max(ops.Abs(c[0])), bound)
		}, func(c []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Add(ops.Scale(c[0], 1.5), q)}
		}, []*graph.Node{h}, ops.MaxSteps(6))
		return append(final, steps)
	},
	"values made in the bodies": func(x, p, q *graph.Node) []*graph.Node {
		// The functions apply ops to parameters and constants alone,
		// which are made in the enclosing graph at every trace.
		g := x.Graph()
		final, _ := ops.While(func(c []*graph.Node) *graph.Node {
			return ops.Less(ops.Max(ops.Abs(c[0])), ops.Add(ops.Sum(ops.Abs(p)), g.Scalar(1, graph.Float64)))
		}, func(c []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Add(ops.Scale(c[0], 1.5), ops.Mul(q, g.Scalar(2, graph.Float64)))}
		}, []*graph.Node{ops.Reshape(ops.Slice(x, 1, 0, 1), -1, 3)}, ops.MaxSteps(6))
		_, ys := ops.Scan(func(_, s []*graph.Node) ([]*graph.Node, []*graph.Node) {
			return nil, ops.Cond(ops.Greater(ops.Sum(s[0]), ops.Sum(q)), func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Sub(o[0], ops.Exp(q))}
			}, func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Mul(o[0], ops.Neg(p))}
			}, s)
		}, nil, []*graph.Node{ops.Transpose(x, 1, 0, 2)})
		return append(final, ys...)
	},
	"Scan of Cond": func(x, p, q *graph.Node) []*graph.Node {
		seq, sq := ops.Transpose(x, 1, 0, 2), ops.Sum(q)
		_, ys := ops.Scan(func(_, s []*graph.Node) ([]*graph.Node, []*graph.Node) {
			return nil, ops.Cond(ops.Greater(ops.Sum(s[0]), sq), func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Sub(o[0], q)}
			}, func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Mul(o[0], p)}
			}, s)
		}, nil, []*graph.Node{seq})
		return ys
	},
}

// examples are n random examples (4, 3).
func examples(rng *rand.Rand, n int) *tensor.Dense {
	v := make([]float64, n*12)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	t, _ := graph.FromFloat64s(graph.Float64, v, n, 4, 3)
	return t
}

// buildBodyModel builds model on a fresh graph for n rows.
func buildBodyModel(model func(x, p, q *graph.Node) []*graph.Node, n int) (*graph.Node, []*graph.Node) {
	g := graph.New()
	x := g.Input("x", graph.Float64, n, 4, 3)
	pv, _ := graph.FromFloat64s(graph.Float64, []float64{0.5, -1, 0.25}, 3)
	qv, _ := graph.FromFloat64s(graph.Float64, []float64{0.1, 0.2, -0.3}, 1, 3)
	return x, model(x, g.Param("p", pv), g.Param("q", qv))
}

// A Runner built for 2 rows computes, in the bodies of Scan, Cond and
// While, at 1, 2 and 5 rows, what a program built for each size
// computes.
func TestRunnerRunsBodiesAtEverySize(t *testing.T) {
	for name, model := range bodyModels {
		t.Run(name, func(t *testing.T) {
			x, outs := buildBodyModel(model, 2)
			r, err := vm.NewRunner(outs, nil, nil)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(9, 10))
			for _, n := range []int{1, 2, 5, 1} {
				hx, houts := buildBodyModel(model, n)
				p, err := compile.Compile(houts)
				require.NoError(t, err)
				ref, err := vm.New(p)
				require.NoError(t, err)
				in := examples(rng, n)
				require.NoError(t, r.Run(vm.Feeds{x: in}), "batch size %d", n)
				require.NoError(t, ref.Run(vm.Feeds{hx: in}))
				for i, o := range outs {
					got, err := r.Value(o)
					require.NoError(t, err)
					want, err := ref.Value(houts[i])
					require.NoError(t, err)
					require.Equal(t, want.Shape(), got.Shape(), "output %d at batch size %d", i, n)
					require.Equal(t, graph.Float64s(want), graph.Float64s(got), "output %d at batch size %d", i, n)
				}
			}
		})
	}
}

// An operand shaped by the built batch, p (2, 3), added in a body to a
// value that follows the batch, or a Reshape in a body keeping the built
// batch as its leading axis: at 1 row (the broadcast) or 4 (the
// Reshape), the body as traced again would give the built batch's rows,
// silently. The Runner refuses the size, naming the op in the body, its
// line and the lines of the ops whose bodies hold it; the built size
// still runs, with the values of a program built for it.
func TestRunnerRefusesBatchShapesInBodies(t *testing.T) {
	type body = func(x, p *graph.Node) []*graph.Node
	for _, c := range []struct {
		name  string
		build body
		rows  int
		want  []string
	}{
		{"Scan output", func(x, p *graph.Node) []*graph.Node {
			_, ys := ops.Scan(func(_, s []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return nil, []*graph.Node{ops.Add(s[0], p)}
			}, nil, []*graph.Node{ops.Transpose(x, 1, 0, 2)})
			return ys
		}, 1, []string{"Add at runner_bodies_test.go:149 (inside the Scan at runner_bodies_test.go:148)", "(1,3) and (2,3) gives (2,3)"}},
		{"Cond", func(x, p *graph.Node) []*graph.Node {
			s := ops.Reshape(ops.Slice(x, 1, 0, 1), -1, 3)
			return ops.Cond(ops.Greater(ops.Sum(s), ops.Sum(p)), func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Mul(o[0], p)}
			}, func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Sub(o[0], p)}
			}, []*graph.Node{s})
		}, 1, []string{"Mul at runner_bodies_test.go:156 (inside the Cond at runner_bodies_test.go:155)"}},
		{"While", func(x, p *graph.Node) []*graph.Node {
			limit := x.Graph().Scalar(100, graph.Float64)
			final, _ := ops.While(func(c []*graph.Node) *graph.Node {
				return ops.Less(ops.Sum(c[0]), limit)
			}, func(c []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Add(c[0], ops.Mean(ops.Add(c[0], p)))}
			}, []*graph.Node{ops.Reshape(ops.Slice(x, 1, 0, 1), -1, 3)}, ops.MaxSteps(3))
			return final
		}, 1, []string{"Add at runner_bodies_test.go:166 (inside the While at runner_bodies_test.go:163)"}},
		{"Reshape in a Scan", func(x, _ *graph.Node) []*graph.Node {
			_, ys := ops.Scan(func(_, s []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return nil, []*graph.Node{ops.Reshape(s[0], 2, -1)}
			}, nil, []*graph.Node{ops.Transpose(x, 1, 0, 2)})
			return ys
		}, 4, []string{"Reshape at runner_bodies_test.go:172 (inside the Scan at runner_bodies_test.go:171): (4,3) to (2,6)"}},
		{"Reshape in a Cond", func(x, p *graph.Node) []*graph.Node {
			s := ops.Reshape(ops.Slice(x, 1, 0, 1), -1, 3)
			return ops.Cond(ops.Greater(ops.Sum(s), ops.Sum(p)), func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Reshape(o[0], 2, -1)}
			}, func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Reshape(ops.Neg(o[0]), 2, -1)}
			}, []*graph.Node{s})
		}, 4, []string{"Reshape at runner_bodies_test.go:179 (inside the Cond at runner_bodies_test.go:178)"}},
		{"Cond in a Scan", func(x, p *graph.Node) []*graph.Node {
			_, ys := ops.Scan(func(_, s []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return nil, ops.Cond(ops.Greater(ops.Sum(s[0]), ops.Sum(s[0])), func(o []*graph.Node) []*graph.Node {
					return []*graph.Node{ops.Mul(o[0], p)}
				}, func(o []*graph.Node) []*graph.Node {
					return []*graph.Node{ops.Sub(o[0], p)}
				}, s)
			}, nil, []*graph.Node{ops.Transpose(x, 1, 0, 2)})
			return ys
		}, 1, []string{"Mul at runner_bodies_test.go:187 (inside the Cond at runner_bodies_test.go:186, inside the Scan at runner_bodies_test.go:185)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", graph.Float64, 2, 4, 3)
			pv, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
			p := g.Param("p", pv)
			outs := c.build(x, p)
			r, err := vm.NewRunner(outs, nil, nil)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(11, 12))
			err = r.Run(vm.Feeds{x: examples(rng, c.rows)})
			require.Error(t, err, "batch size %d", c.rows)
			for _, w := range append(c.want, fmt.Sprintf("batch size %d; the graph was built for 2", c.rows)) {
				require.ErrorContains(t, err, w)
			}
			require.NoError(t, g.Err(), "a refused size must not poison the graph")

			feeds := vm.Feeds{x: examples(rng, 2)}
			require.NoError(t, r.Run(feeds), "the built size still runs")
			p2, err := compile.Compile(outs)
			require.NoError(t, err)
			ref, err := vm.New(p2)
			require.NoError(t, err)
			require.NoError(t, ref.Run(feeds))
			for _, o := range outs {
				got, err := r.Value(o)
				require.NoError(t, err)
				want, err := ref.Value(o)
				require.NoError(t, err)
				require.Equal(t, graph.Float64s(want), graph.Float64s(got))
			}
		})
	}
}

// Branches whose number of outputs follows the operand's shape (two at
// two rows, one at one) cannot be traced again at one row as the graph
// uses them: the Runner says so, naming the Cond and its line, where
// replaying it panicked.
func TestRunnerRefusesBodiesOfOtherOutputs(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	branch := func(o []*graph.Node) []*graph.Node {
		outs := []*graph.Node{ops.Neg(o[0])}
		if o[0].Shape()[0] > 1 {
			outs = append(outs, ops.Exp(o[0]))
		}
		return outs
	}
	outs := ops.Cond(ops.Greater(ops.Sum(x), g.Scalar(0, graph.Float64)), branch, branch, []*graph.Node{x})
	require.Len(t, outs, 2)
	r, err := vm.NewRunner(outs, nil, nil)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(13, 14))
	require.NoError(t, r.Run(vm.Feeds{x: rows(rng, 2, 3)}))
	var runErr error
	require.NotPanics(t, func() { runErr = r.Run(vm.Feeds{x: rows(rng, 1, 3)}) })
	require.Error(t, runErr)
	for _, want := range []string{"Cond", "runner_bodies_test.go:243", "it has 1 outputs, not 2 as built", "batch size 1; the graph was built for 2"} {
		require.ErrorContains(t, runErr, want)
	}
	require.NoError(t, r.Run(vm.Feeds{x: rows(rng, 2, 3)}), "the built size still runs")
}
