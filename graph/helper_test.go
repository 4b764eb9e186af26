package graph_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/nabla-go/nabla/graph"
)

// withCaller returns inside and the file:line of the statement calling
// withCaller, which is the statement calling the helper in withCaller's
// arguments.
func withCaller(_ *graph.Node, inside string) (string, string) {
	_, file, line, _ := runtime.Caller(1)
	return inside, fmt.Sprintf("%s:%d", filepath.Base(file), line)
}

// thisLine is the file:line it is called from.
func thisLine() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}

// addWrong adds x to a vector of another length: a shape mistake made
// inside a user's helper. It returns the line of that mistake.
func addWrong(x *graph.Node) (*graph.Node, string) {
	y := x.Graph().Input("y", graph.Float64, 3)
	return graph.Apply(addOp{}, x, y), thisLine()
}

// markedAddWrong is addWrong marked as a helper.
func markedAddWrong(x *graph.Node) (*graph.Node, string) {
	graph.Helper()
	y := x.Graph().Input("y", graph.Float64, 3)
	return graph.Apply(addOp{}, x, y), thisLine()
}

// outerHelper is a helper calling another.
func outerHelper(x *graph.Node) (*graph.Node, string) {
	graph.Helper()
	return markedAddWrong(x)
}

// An error inside a function marked by graph.Helper names the line that
// called it; inside an unmarked one, the line inside.
func TestHelperMovesTheSiteToTheCaller(t *testing.T) {
	cases := []struct {
		name   string
		build  func(x *graph.Node) (inside, caller string)
		caller bool // whether the error names the caller's line
	}{
		{"unmarked", func(x *graph.Node) (string, string) { return withCaller(addWrong(x)) }, false},
		{"marked", func(x *graph.Node) (string, string) { return withCaller(markedAddWrong(x)) }, true},
		{"marked, called by a marked one", func(x *graph.Node) (string, string) { return withCaller(outerHelper(x)) }, true},
	}
	for _, c := range cases {
		g := graph.New()
		x := g.Input("x", graph.Float64, 2)
		want, caller := c.build(x)
		if c.caller {
			want = caller
		}
		err := g.Err()
		if err == nil || !strings.HasSuffix(err.Error(), " at "+want) || !strings.Contains(err.Error(), "TestAdd") {
			t.Errorf("case %s: got %v, want an error from TestAdd at %s", c.name, err, want)
		}
	}
}

// Helper may be called from many goroutines at once; each error names
// its own goroutine's call.
func TestHelperConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	got, want := make([]string, 8), make([]string, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := graph.New()
			_, want[i] = withCaller(markedAddWrong(g.Input("x", graph.Float64, 2)))
			var e *graph.Error
			if errors.As(g.Err(), &e) {
				got[i] = e.Site
			}
		}()
	}
	wg.Wait()
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("goroutine %d: site %q, want %q", i, got[i], want[i])
		}
	}
}

// A builder called through reflect names the line that called reflect,
// not reflect's own (value.go).
func TestSiteSkipsReflect(t *testing.T) {
	g := graph.New()
	x, y := g.Input("x", graph.Float64, 2), g.Input("y", graph.Float64, 3)
	args := []reflect.Value{reflect.ValueOf(addOp{}), reflect.ValueOf(x), reflect.ValueOf(y)}
	_, want := reflect.ValueOf(graph.Apply).Call(args), thisLine()
	if err := g.Err(); err == nil || !strings.HasSuffix(err.Error(), " at "+want) {
		t.Errorf("got %v, want an error at %s", err, want)
	}
}
