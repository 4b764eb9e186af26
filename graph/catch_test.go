package graph_test

import (
	"testing"

	"github.com/nabla-go/nabla/graph"
)

// Catch takes back the first error a function's ops record on the graph,
// or on a graph enclosing it, and leaves an error recorded before.
func TestCatchTakesBackTheFunctionsError(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	err := g.Catch(func() {
		g.Fail(&graph.Error{Op: "Inner", Err: errString("first")})
		g.Fail(&graph.Error{Op: "Inner", Err: errString("second")})
	})
	if err == nil || err.Error() != "nabla: Inner: first" || g.Err() != nil {
		t.Fatalf("Catch gave %v, the graph keeps %v; want the first error, taken off the graph", err, g.Err())
	}
	if err := g.Catch(func() { x.Graph().Input("y", graph.Float64, 1) }); err != nil || g.Err() != nil {
		t.Fatalf("a function recording nothing: %v, %v", err, g.Err())
	}

	sub := g.NewSub()
	err = sub.Catch(func() { g.Fail(&graph.Error{Op: "Outer", Err: errString("on the enclosing graph")}) })
	if err == nil || err.Error() != "nabla: Outer: on the enclosing graph" || g.Err() != nil || sub.Err() != nil {
		t.Fatalf("an error on the enclosing graph: Catch gave %v, the graphs keep %v and %v", err, g.Err(), sub.Err())
	}

	before := g.Fail(&graph.Error{Op: "Before", Err: errString("earlier")}).Err()
	err = g.Catch(func() { g.Fail(&graph.Error{Op: "Inner", Err: errString("later")}) })
	if err != nil || g.Err() != before {
		t.Fatalf("an error recorded before: Catch gave %v, the graph keeps %v, want nil and %v", err, g.Err(), before)
	}
	var nilGraph *graph.Graph
	called := false
	if err := nilGraph.Catch(func() { called = true }); err != nil || !called {
		t.Fatalf("a nil graph: Catch gave %v, called %v", err, called)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
