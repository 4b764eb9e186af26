package main

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// SiLULayer returns SiLU(x·w): a helper that builds nodes for its caller.
func SiLULayer(x, w *graph.Node) *graph.Node {
	graph.Helper() // errors name SiLULayer's caller, not the line below
	return SiLU(ops.MatMul(x, w))
}
