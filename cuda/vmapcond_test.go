package cuda

import (
	"fmt"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// A Vmapped Cond whose predicate is batched (both branches for the
// batch, each example's result selected, the branches' inputs through
// GradGate) runs wholly on the device, with its per-example gradient:
// no instruction on the host, the values the CPU's.
func TestVmapCondOnDevice(t *testing.T) {
	devs := testDevices(t)
	for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
		g := graph.New()
		x := g.Input("x", dtype, 5)
		w := g.Input("w", dtype)
		ys, err := compile.Vmap(func(ex []*graph.Node) []*graph.Node {
			v := ex[0]
			y := ops.Cond(ops.Greater(v, ops.Sub(w, w)), func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Mul(ops.Log(o[0]), w)}
			}, func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Mul(o[0], w)}
			}, []*graph.Node{v})
			grad, err := compile.Grad(y[0], v)
			if err != nil {
				panic(err)
			}
			return append(y, grad[0])
		}, []*graph.Node{x}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := compile.Compile(ys)
		if err != nil {
			t.Fatal(err)
		}
		xv, _ := graph.FromFloat64s(dtype, []float64{2, -1, 0, 0.5, 3}, 5)
		wv, _ := graph.FromFloat64s(dtype, []float64{1.5})
		feeds := vm.Feeds{x: xv, w: wv}
		for _, dev := range devs {
			cpu, err := vm.New(prog, vm.WithThreads(1))
			if err != nil {
				t.Fatal(err)
			}
			m, err := vm.New(prog, vm.OnDevice(dev))
			if err != nil {
				t.Fatal(err)
			}
			if err := compareRun(cpu, m, feeds, []*graph.Node{ys[0], ys[1]}); err != nil {
				t.Errorf("%v on %v: %v", dtype, dev, err)
			}
			var host []string
			for i, in := range prog.Instructions() {
				if m.OnHost(i) {
					host = append(host, fmt.Sprintf("%s (%v)", in.Name(), in.Node))
				}
			}
			if len(host) > 0 {
				t.Errorf("%v on %v: on the host: %v", dtype, dev, host)
			}
			cpu.Close()
			m.Close()
		}
	}
}
