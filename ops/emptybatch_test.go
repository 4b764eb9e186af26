package ops_test

import (
	"fmt"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// The convolutions and poolings on an empty batch or with no channels
// build, differentiate and run, on one thread and on three: the loss and
// every gradient are zero (an empty sum), where Conv2D's weight gradient
// panicked on an empty batch.
func TestConvAndPoolOnEmptyBatches(t *testing.T) {
	conv1 := func(x, w *graph.Node) *graph.Node { return ops.Conv1D(x, w, ops.ConvOptions{Padding: []int{1}}) }
	conv2 := func(x, w *graph.Node) *graph.Node { return ops.Conv2D(x, w, ops.ConvOptions{Padding: []int{1}}) }
	convT := func(x, w *graph.Node) *graph.Node {
		return ops.ConvTranspose2D(x, w, ops.ConvOptions{Stride: []int{2}})
	}
	// The poolings scale by w's sum, so that w has a gradient too.
	maxPool := func(x, w *graph.Node) *graph.Node {
		return ops.Mul(ops.MaxPool2D(x, ops.PoolOptions{Kernel: []int{3}, Stride: []int{2}, Padding: []int{1}}), ops.Sum(w))
	}
	avgPool := func(x, w *graph.Node) *graph.Node {
		return ops.Mul(ops.AvgPool2D(x, ops.PoolOptions{Kernel: []int{2}}), ops.Sum(w))
	}
	for _, c := range []struct {
		name  string
		x, w  []int
		build func(x, w *graph.Node) *graph.Node
	}{
		{"Conv1D", []int{0, 3, 7}, []int{2, 3, 3}, conv1},
		{"Conv1D", []int{2, 0, 7}, []int{2, 0, 3}, conv1},
		{"Conv2D", []int{0, 3, 5, 5}, []int{2, 3, 3, 3}, conv2},
		{"Conv2D", []int{2, 0, 5, 5}, []int{2, 0, 3, 3}, conv2},
		{"Conv2D", []int{2, 3, 5, 5}, []int{0, 3, 3, 3}, conv2},
		{"ConvTranspose2D", []int{0, 3, 4, 4}, []int{3, 2, 3, 3}, convT},
		{"ConvTranspose2D", []int{2, 0, 4, 4}, []int{0, 2, 3, 3}, convT},
		{"ConvTranspose2D", []int{2, 3, 4, 4}, []int{3, 0, 3, 3}, convT},
		{"MaxPool2D", []int{0, 3, 5, 5}, []int{2}, maxPool},
		{"MaxPool2D", []int{2, 0, 5, 5}, []int{2}, maxPool},
		{"AvgPool2D", []int{0, 3, 5, 5}, []int{2}, avgPool},
		{"AvgPool2D", []int{2, 0, 5, 5}, []int{2}, avgPool},
	} {
		for _, threads := range []int{1, 3} {
			name := fmt.Sprintf("%s x%v w%v threads %d", c.name, graph.ShapeString(c.x), graph.ShapeString(c.w), threads)
			g := graph.New()
			x, w := g.Input("x", graph.Float64, c.x...), g.Input("w", graph.Float64, c.w...)
			y := c.build(x, w)
			loss := ops.Sum(ops.Mul(y, y))
			grads, err := compile.Grad(loss, x, w)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			outs := append([]*graph.Node{loss}, grads...)
			prog, err := compile.Compile(outs)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			m, err := vm.New(prog, vm.WithThreads(threads))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			feeds := vm.Feeds{x: ones(c.x), w: ones(c.w)}
			if err := m.Run(feeds); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for i, n := range outs {
				v, err := m.Value(n)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for j, f := range graph.Float64s(v) {
					if f != 0 {
						t.Errorf("%s: output %d (%v) [%d] = %v, want 0", name, i, n, j, f)
						break
					}
				}
			}
		}
	}
}

// ones is a float64 tensor of shape filled with ones.
func ones(shape []int) *tensor.Dense {
	d := graph.NewDense(graph.Float64, shape...)
	v := d.Float64s()
	for i := range v {
		v[i] = 1
	}
	return d
}
