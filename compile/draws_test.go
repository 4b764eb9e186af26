package compile_test

import (
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// A program whose random ops draw at a generator's step without the
// generator's updates is an error naming the op, its line and the remedy;
// with the updates it draws afresh at each run, and WithFixedDraws repeats
// the draws on purpose. A step fed as an input is the caller's to advance.
func TestCompileRefusesRepeatedDraws(t *testing.T) {
	g := graph.New()
	gen := ops.NewGenerator(g, "rng", 11)
	x := ops.Add(gen.Normal(graph.Float64, 3), gen.Uniform(graph.Float64, 3))
	y := ops.Sum(x)
	// Each kind of random op is checked, also when only an update needs it.
	ints := gen.Int(0, 5, graph.Float64, 2)
	cat := gen.Categorical(g.Const(graph.NewDense(graph.Float64, 2, 3)))
	w := g.Param("w", graph.NewDense(graph.Float64, 2))
	for i, c := range []struct {
		outputs []*graph.Node
		updates map[*graph.Node]*graph.Node
		op      string
	}{
		{[]*graph.Node{y}, nil, "RandomNormal"},
		{[]*graph.Node{ops.Sum(ints)}, nil, "RandomInt"},
		{nil, map[*graph.Node]*graph.Node{w: cat}, "RandomCategorical"},
	} {
		_, err := compile.Compile(c.outputs, compile.WithUpdates(c.updates))
		want := `draws at step "rng", a parameter that no update of the program advances, so every run would repeat its draws: pass gen.Updates() (a model's: nn.TrainingUpdates or nn.StateUpdates) to compile.WithUpdates, or compile.WithFixedDraws() to repeat the same draws on purpose`
		if err == nil || !strings.Contains(err.Error(), "nabla: Compile: "+c.op) || !strings.Contains(err.Error(), "built at draws_test.go:") || !strings.Contains(err.Error(), want) {
			t.Errorf("case %d: got %v, want an error naming %s, its line and the remedy", i, err, c.op)
		}
	}

	runTwice := func(opts ...compile.Option) [2]float64 {
		t.Helper()
		p, err := compile.Compile([]*graph.Node{y}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		m, err := vm.New(p)
		if err != nil {
			t.Fatal(err)
		}
		var out [2]float64
		for i := range out {
			if err := m.Run(nil); err != nil {
				t.Fatal(err)
			}
			v, _ := m.Value(y)
			out[i] = graph.Float(v, 0)
		}
		return out
	}
	if v := runTwice(compile.WithUpdates(gen.Updates())); v[0] == v[1] {
		t.Errorf("with the updates: two runs gave %v, want different draws", v)
	}
	if v := runTwice(compile.WithFixedDraws()); v[0] != v[1] {
		t.Errorf("WithFixedDraws: two runs gave %v, want the same draws", v)
	}

	step := g.Input("step", graph.Float64)
	fed := ops.RandomNormal(step, ops.Stream{Seed: 99}, graph.Float64, 2)
	if _, err := compile.Compile([]*graph.Node{fed}); err != nil {
		t.Errorf("a step fed as an input: %v", err)
	}
}
