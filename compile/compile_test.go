package compile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func TestDeadcodeKeepsOnlyWhatOutputsNeed(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	unused := g.Input("unused", graph.Float64, 3)
	a := ops.Exp(x)
	_ = ops.Log(unused) // dead
	_ = ops.Sin(a)      // dead: built after a, needed by nothing
	y := ops.Mul(a, x)
	p, err := Compile([]*graph.Node{y}, WithChecks(), WithoutPass("fuse"))
	require.NoError(t, err)
	var names []string
	for _, in := range p.Instructions() {
		names = append(names, in.Name())
	}
	require.Equal(t, []string{"Exp", "Mul"}, names)
	require.Equal(t, []*graph.Node{x}, p.Inputs())

	p, err = Compile([]*graph.Node{y}, WithoutPass("deadcode"), WithoutPass("late deadcode"), WithoutPass("fuse"), WithChecks())
	require.NoError(t, err)
	require.Len(t, p.Instructions(), 4, "without deadcode every node up to the output stays")
}

func TestPassTable(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range passes {
		require.False(t, seen[p.name], "pass %s listed twice", p.name)
		seen[p.name] = true
		require.NotNil(t, p.fn, p.name)
	}
	require.Equal(t, "allocslots", passes[len(passes)-1].name, "slots are numbered last")
	g := graph.New()
	y := ops.Exp(g.Input("x", graph.Float64))
	_, err := Compile([]*graph.Node{y}, WithoutPass("nosuchpass"))
	require.ErrorContains(t, err, `unknown pass "nosuchpass"`)
	_, err = Compile([]*graph.Node{y}, WithoutPass("allocslots"))
	require.ErrorContains(t, err, "cannot be switched off")
}

func TestCompileRequestErrors(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	w := g.Param("w", graph.NewDense(graph.Float64, 2))
	other := graph.New().Input("o", graph.Float64, 2)
	cases := []struct {
		name    string
		outputs []*graph.Node
		updates map[*graph.Node]*graph.Node
		want    string
	}{
		{"nothing", nil, nil, "no outputs"},
		{"nil output", []*graph.Node{nil}, nil, "output 0 is nil"},
		{"two graphs", []*graph.Node{x, other}, nil, "another graph"},
		{"update non-param", []*graph.Node{x}, map[*graph.Node]*graph.Node{x: x}, "is not a parameter"},
		{"update type", []*graph.Node{x}, map[*graph.Node]*graph.Node{w: g.Scalar(1, graph.Float64)}, "has type float64(), want float64(2)"},
	}
	for _, c := range cases {
		_, err := Compile(c.outputs, WithUpdates(c.updates))
		require.ErrorContains(t, err, c.want, c.name)
	}
	bad := ops.Add(x, g.Input("y", graph.Float64, 3))
	_, err := Compile([]*graph.Node{bad})
	require.ErrorContains(t, err, "nabla: Add")
}

func TestCheckerCatchesBrokenFunctions(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := ops.Exp(x)
	f := newFunction([]*graph.Node{y}, nil)
	require.NoError(t, checkFunction(f))
	f.values[0], f.values[1] = f.values[1], f.values[0]
	require.ErrorContains(t, checkFunction(f), "not before it")

	f = newFunction([]*graph.Node{y}, nil)
	f.values[1].typ = graph.TypeOf(graph.Float64, 3)
	require.ErrorContains(t, checkFunction(f), "but the op infers float64(2)")
}

// A Scan's listing shows its body's program under it.
func TestProgramStringShowsBodies(t *testing.T) {
	g := graph.New()
	xs := g.Input("xs", graph.Float64, 4, 2)
	h0 := g.Input("h0", graph.Float64, 2)
	final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return []*graph.Node{ops.Tanh(ops.Add(c[0], x[0]))}, nil
	}, []*graph.Node{h0}, []*graph.Node{xs})
	p, err := Compile([]*graph.Node{final[0]})
	if err != nil {
		t.Fatal(err)
	}
	want := "%0, %1 = Scan h0 xs\n  body 0:\n    %0 = Fused(Add,Tanh) carry0 x0\n    return %0\nreturn %0\n"
	if got := p.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
