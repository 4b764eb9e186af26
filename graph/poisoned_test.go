package graph_test

import (
	"testing"

	"github.com/nabla-go/nabla/graph"
)

// scaleBuilder is a builder of the user's own: a nil input is Poisoned's
// error, in its name and at the line calling it (a helper).
func scaleBuilder(x *graph.Node) *graph.Node {
	graph.Helper()
	if p := graph.Poisoned(x); p != nil {
		return p
	}
	return x
}

// block is a module of the user's own, checking its input in a closure
// of a method.
type block struct{}

func (*block) Forward(x *graph.Node) (*graph.Node, string) {
	check := func() (*graph.Node, string) { return graph.Poisoned(x), thisLine() }
	return check()
}

// A nil node's error from Poisoned names the function the user called and
// the user's line, rather than "nabla: nil node" alone; a poisoned node's
// own error is kept.
func TestPoisonedNamesTheFunctionAndLine(t *testing.T) {
	p, line := scaleBuilder(nil), thisLine()
	if want := "nabla: graph_test.scaleBuilder: got a nil node for an input at " + line; p.Err() == nil || p.Err().Error() != want {
		t.Errorf("got %v, want %s", p.Err(), want)
	}
	p, line = (&block{}).Forward(nil)
	if want := "nabla: graph_test.block.Forward: got a nil node for an input at " + line; p.Err() == nil || p.Err().Error() != want {
		t.Errorf("got %v, want %s", p.Err(), want)
	}
	bad := graph.New().Input("x", graph.Float64, -1)
	if p := graph.Poisoned(graph.New().Input("y", graph.Float64, 2), bad, nil); p != bad {
		t.Errorf("got %v, want the first poisoned node, %v", p, bad)
	}
	if p := graph.Poisoned(graph.New().Input("z", graph.Float64, 2)); p != nil {
		t.Errorf("got %v for a healthy node, want nil", p)
	}
}
