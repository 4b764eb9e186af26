package compile_test

import (
	"regexp"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// The check of repeated draws looks inside the bodies of Scan, While,
// Cond and Checkpoint: a loop's body drawing at a step that none of its
// carries or sequences changes repeats its draws at every step; a body's
// draw at a parameter no update advances repeats them at every run; and
// a stream drawn inside a body and outside it, or in two bodies, at the
// same step, repeats its bits in both. Each error names the draws' lines.
func TestCompileRefusesRepeatedDrawsInBodies(t *testing.T) {
	type built struct {
		outs    []*graph.Node
		updates map[*graph.Node]*graph.Node
		want    string // a regexp; "" for a program that compiles
	}
	site := `draws_body_test\.go:\d+`
	cases := map[string]func() built{
		"Scan body reuses the generator's step": func() built {
			g := graph.New()
			gen := ops.NewGenerator(g, "rng", 1)
			final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{ops.Add(c[0], gen.Normal(graph.Float64, 3))}, nil
			}, []*graph.Node{g.Const(graph.NewDense(graph.Float64, 3))}, nil, ops.Steps(4))
			return built{final, gen.Updates(), `^nabla: Compile: RandomNormal .* built at ` + site + ` draws at the same step and stream at each of the 4 steps of the Scan built at ` + site + `, so every step repeats its draws: draw the noise outside the loop, with a leading axis of the steps, and pass it as a sequence, or draw at a step computed from a carry`}
		},
		"Scan body without the updates": func() built {
			g := graph.New()
			gen := ops.NewGenerator(g, "rng", 1)
			final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{ops.Add(c[0], gen.Uniform(graph.Float64, 3))}, nil
			}, []*graph.Node{g.Const(graph.NewDense(graph.Float64, 3))}, nil, ops.Steps(1))
			return built{final, nil, `^nabla: Compile: RandomUniform .* built at ` + site + ` draws at step "rng", a parameter that no update of the program advances`}
		},
		"While body reuses the generator's step": func() built {
			g := graph.New()
			gen := ops.NewGenerator(g, "rng", 1)
			final, _ := ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(ops.Sum(c[0]), g.Scalar(10, graph.Float64)) },
				func(c []*graph.Node) []*graph.Node {
					return []*graph.Node{ops.Add(c[0], gen.Uniform(graph.Float64, 3))}
				}, []*graph.Node{g.Const(graph.NewDense(graph.Float64, 3))}, ops.MaxSteps(8))
			return built{final, gen.Updates(), `^nabla: Compile: RandomUniform .* built at ` + site + ` draws at the same step and stream at each of the 8 steps of the While built at ` + site}
		},
		"Checkpoint in a Scan body": func() built {
			g := graph.New()
			gen := ops.NewGenerator(g, "rng", 1)
			final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return ops.Checkpoint(func(in []*graph.Node) []*graph.Node {
					return []*graph.Node{ops.Mul(in[0], gen.NormalLike(in[0]))}
				}, c[0]), nil
			}, []*graph.Node{g.Const(graph.NewDense(graph.Float64, 3))}, nil, ops.Steps(2))
			return built{final, gen.Updates(), `^nabla: Compile: RandomNormal .* built at ` + site + ` draws at the same step and stream at each of the 2 steps of the Scan built at ` + site}
		},
		"inner loop's carried step restarts at every outer step": func() built {
			g := graph.New()
			step := g.Param("step", graph.NewDense(graph.Float64))
			s := ops.Stream{Seed: 3}
			final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
				inner, _ := ops.Scan(func(d, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
					one := d[1].Graph().Scalar(1, graph.Float64)
					return []*graph.Node{ops.Add(d[0], ops.RandomNormalLike(d[1], s, d[0])), ops.Add(d[1], one)}, nil
				}, []*graph.Node{c[0], step}, nil, ops.Steps(2))
				return inner[:1], nil
			}, []*graph.Node{g.Const(graph.NewDense(graph.Float64, 3))}, nil, ops.Steps(3))
			up := map[*graph.Node]*graph.Node{step: ops.Add(step, g.Scalar(6, graph.Float64))}
			return built{final, up, `^nabla: Compile: RandomNormal .* built at ` + site + ` draws at the same step and stream at each of the 3 steps of the Scan built at ` + site}
		},
		"a stream drawn inside a Cond and outside": func() built {
			g := graph.New()
			step := g.Param("step", graph.NewDense(graph.Float64))
			s := ops.Stream{Seed: 7, ID: 3}
			out := ops.RandomNormal(step, s, graph.Float64, 3)
			y := ops.Cond(g.Scalar(1, graph.Float64), func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Add(o[0], ops.RandomUniformLike(step, s, o[0]))}
			}, func(o []*graph.Node) []*graph.Node { return o }, []*graph.Node{out})
			up := map[*graph.Node]*graph.Node{step: ops.Add(step, g.Scalar(1, graph.Float64))}
			return built{y, up, `^nabla: Compile: RandomUniform .* built at ` + site + ` and RandomNormal .* built at ` + site + ` draw stream 3 of seed 7 at the same step, so they repeat each other's bits: give each its own stream \(a Generator does\)`}
		},
		"Cond branch draws once a run": func() built {
			g := graph.New()
			gen := ops.NewGenerator(g, "rng", 1)
			x := g.Const(graph.NewDense(graph.Float64, 3))
			y := ops.Cond(g.Scalar(1, graph.Float64), func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Add(o[0], gen.NormalLike(o[0]))}
			}, func(o []*graph.Node) []*graph.Node { return o }, []*graph.Node{x})
			return built{y, gen.Updates(), ""}
		},
		"Scan draws at a carried step, and its gradient": func() built {
			g := graph.New()
			w := g.Param("w", graph.NewDense(graph.Float64, 3))
			step := g.Param("step", graph.NewDense(graph.Float64))
			s := ops.Stream{Seed: 9}
			final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
				eps := ops.RandomNormal(c[1], s, graph.Float64, 3)
				return []*graph.Node{ops.Add(c[0], ops.Mul(w, eps)), ops.Add(c[1], c[1].Graph().Scalar(1, graph.Float64))}, nil
			}, []*graph.Node{g.Const(graph.NewDense(graph.Float64, 3)), ops.Mul(step, g.Scalar(5, graph.Float64))}, nil, ops.Steps(5))
			loss := ops.Sum(ops.Mul(final[0], final[0]))
			grads, err := compile.Grad(loss, w)
			if err != nil {
				t.Fatal(err)
			}
			up := map[*graph.Node]*graph.Node{step: ops.Add(step, g.Scalar(1, graph.Float64)), w: ops.Sub(w, grads[0])}
			return built{[]*graph.Node{loss}, up, ""}
		},
		"Checkpoint's recomputation draws the same values": func() built {
			g := graph.New()
			gen := ops.NewGenerator(g, "rng", 1)
			w := g.Param("w", graph.NewDense(graph.Float64, 3))
			y := ops.Checkpoint(func(in []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Mul(in[0], gen.NormalLike(in[0]))}
			}, w)
			grads, err := compile.Grad(ops.Sum(ops.Mul(y[0], y[0])), w)
			if err != nil {
				t.Fatal(err)
			}
			return built{grads, gen.Updates(), ""}
		},
	}
	for name, build := range cases {
		b := build()
		_, err := compile.Compile(b.outs, compile.WithUpdates(b.updates))
		switch {
		case b.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case b.want != "" && (err == nil || !regexp.MustCompile(b.want).MatchString(err.Error())):
			t.Errorf("%s: got %v, want an error matching %s", name, err, b.want)
		case b.want != "":
			t.Logf("%s: %v", name, err)
			if _, err := compile.Compile(b.outs, compile.WithUpdates(b.updates), compile.WithFixedDraws()); err != nil {
				t.Errorf("%s: WithFixedDraws: %v", name, err)
			}
		}
	}
}

// The refusal is warranted: a Scan body drawing with the generator draws
// the same values at every step.
func TestScanBodyDrawsRepeatAtEachStep(t *testing.T) {
	g := graph.New()
	gen := ops.NewGenerator(g, "rng", 1)
	_, ys := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return c, []*graph.Node{gen.Normal(graph.Float64, 2)}
	}, []*graph.Node{g.Scalar(0, graph.Float64)}, nil, ops.Steps(3))
	p, err := compile.Compile(ys, compile.WithFixedDraws())
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(nil); err != nil {
		t.Fatal(err)
	}
	v, _ := m.Value(ys[0])
	for i := 1; i < 3; i++ {
		if graph.Float(v, 2*i) != graph.Float(v, 0) || graph.Float(v, 2*i+1) != graph.Float(v, 1) {
			t.Errorf("step %d drew %v, %v; step 0 %v, %v", i, graph.Float(v, 2*i), graph.Float(v, 2*i+1), graph.Float(v, 0), graph.Float(v, 1))
		}
	}
}
