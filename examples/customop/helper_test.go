package main

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
)

// A shape mistake inside SiLULayer, a function marked by graph.Helper, is
// reported at the line calling it.
func TestSiLULayerErrorsNameItsCaller(t *testing.T) {
	g := graph.New()
	x, w := g.Input("x", graph.Float64, 2, 3), g.Input("w", graph.Float64, 4, 5)
	SiLULayer(x, w)
	_, _, line, _ := runtime.Caller(0)
	want := fmt.Sprintf("at helper_test.go:%d", line-1)
	if err := g.Err(); err == nil || !strings.Contains(err.Error(), "MatMul") || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got %v, want a MatMul error %s", err, want)
	}
}
