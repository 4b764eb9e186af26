package vm_test

import (
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// A program whose buffers exceed the memory limit is an error from New
// naming the node and the bytes, before anything is allocated (8 TiB here
// would otherwise kill the process).
func TestMemoryLimit(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 1<<20, 1<<20)
	p, err := compile.Compile([]*graph.Node{ops.Sum(x)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = vm.New(p)
	wantErr(t, "8 TiB input", err, `over the memory limit of`)
	wantErr(t, "8 TiB input", err, `holds input "x"`)
	wantErr(t, "8 TiB input", err, `the largest, 8796093022208 bytes (8 TiB)`)

	g = graph.New()
	x = g.Input("x", graph.Float64, 16)
	p, err = compile.Compile([]*graph.Node{ops.Exp(x)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = vm.New(p, vm.WithMemoryLimit(200)) // two buffers of 128 bytes
	wantErr(t, "256 bytes under a 200-byte limit", err, "buffers need 256 bytes, over the memory limit of 200 bytes")
	if _, err := vm.New(p, vm.WithMemoryLimit(256)); err != nil {
		t.Errorf("256 bytes under a 256-byte limit: %v", err)
	}
}
