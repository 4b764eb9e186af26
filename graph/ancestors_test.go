package graph_test

import (
	"slices"
	"testing"

	"github.com/nabla-go/nabla/graph"
)

// TestAncestorsAndDescendants checks both sweeps on a graph drawn by hand:
// a = x+y, b = a+z, c = z+z; b's ancestors are x, y, z, a and b, and x's
// descendants are x, a and b. Nil, poisoned and foreign nodes mark
// nothing.
func TestAncestorsAndDescendants(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := g.Input("y", graph.Float64, 2)
	z := g.Input("z", graph.Float64, 2)
	a := graph.Apply(addOp{}, x, y)
	b := graph.Apply(addOp{}, a, z)
	c := graph.Apply(addOp{}, z, z)
	marked := func(marks []bool) []*graph.Node {
		var out []*graph.Node
		for id, m := range marks {
			if m {
				out = append(out, g.Node(id))
			}
		}
		return out
	}
	cases := []struct {
		name string
		got  []bool
		want []*graph.Node
	}{
		{"ancestors of b", g.Ancestors([]*graph.Node{b}), []*graph.Node{x, y, z, a, b}},
		{"ancestors of a and c", g.Ancestors([]*graph.Node{a, c}), []*graph.Node{x, y, z, a, c}},
		{"descendants of x", g.Descendants([]*graph.Node{x}, c.ID()), []*graph.Node{x, a, b}},
		{"ancestors of nil and a foreign node", g.Ancestors([]*graph.Node{nil, graph.New().Input("w", graph.Float64)}), nil},
	}
	for _, c := range cases {
		if got := marked(c.got); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	if got := (*graph.Graph)(nil).Ancestors([]*graph.Node{x}); got != nil {
		t.Errorf("nil graph: got %v, want nil", got)
	}
}
