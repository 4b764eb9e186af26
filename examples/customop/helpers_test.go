package main

import (
	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
)

// compileGrad is compile.Grad of one node.
func compileGrad(y, x *graph.Node) (*graph.Node, error) {
	d, err := compile.Grad(y, x)
	if err != nil {
		return nil, err
	}
	return d[0], nil
}
