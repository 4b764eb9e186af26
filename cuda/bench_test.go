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

// BenchmarkMatMul times an n×n product on the first GPU two ways: as a
// program of one MatMul on a machine (Run, then reading the result's
// first element back is the sync), and as the same cuBLAS call made
// directly on the device's buffers with a sync: the target is the
// first within 5% of the second. It skips where no GPU can be used.
func BenchmarkMatMul(b *testing.B) {
	dev, err := Open(0)
	if err != nil {
		b.Skipf("no GPU: %v", err)
	}
	defer dev.Close()
	for _, n := range []int{1024, 4096} {
		for _, dtype := range []tensor.Dtype{graph.Float32, graph.Float64} {
			g := graph.New()
			x := g.Input("a", dtype, n, n)
			y := g.Input("b", dtype, n, n)
			prod := ops.MatMul(x, y)
			prog, err := compile.Compile([]*graph.Node{prod})
			if err != nil {
				b.Fatal(err)
			}
			feeds := vm.Feeds{x: graph.NewDenseOf(x.Type()), y: graph.NewDenseOf(y.Type())}
			m, err := vm.New(prog, vm.OnDevice(dev))
			if err != nil {
				b.Fatal(err)
			}
			if err := m.Run(feeds); err != nil {
				b.Fatal(err)
			}
			e := m.Executable().(*executable)
			flops := 2 * float64(n) * float64(n) * float64(n)
			b.Run(fmt.Sprintf("n=%d/%v/machine", n, dtype), func(b *testing.B) {
				for b.Loop() {
					if err := e.Run(vm.RunOptions{}); err != nil {
						b.Fatal(err)
					}
					if err := dev.be.sync(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
			})
			b.Run(fmt.Sprintf("n=%d/%v/cublas", n, dtype), func(b *testing.B) {
				call := e.gemms[0]
				for b.Loop() {
					if err := dev.be.gemm(&call); err != nil {
						b.Fatal(err)
					}
					if err := dev.be.sync(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
			})
			m.Close()
		}
	}
}
