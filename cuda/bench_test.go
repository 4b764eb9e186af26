package cuda

import (
	"fmt"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
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

// BenchmarkStepParts splits W1's training step (784-256-256-10, batch 64,
// SGD, float32) on the first GPU into parts, to say where its time goes:
//
//	step       the whole step as bench's BenchmarkGPU times it: the feeds
//	           written, the recorded graph launched, the loss read back
//	graph      the recorded graph alone, launched and waited for
//	roundtrip  a program of one kernel on one number, fed, run and read
//	           back: what any step costs however little it computes
//
// It logs the plan's kernels and products, and the profile's slowest
// instructions (each timed alone, the device waited for after it).
func BenchmarkStepParts(b *testing.B) {
	dev, err := Open(0)
	if err != nil {
		b.Skipf("no GPU: %v", err)
	}
	defer dev.Close()
	prog, feeds := mlpStepOf(b, graph.Float32, nn.NewSGD(nn.SGDConfig{LR: 0.01}), []int{784, 256, 256, 10}, 64)
	loss := prog.Outputs()[0]
	m, err := vm.New(prog, vm.OnDevice(dev))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	e := m.Executable().(*executable)
	kernels, gemms := 0, 0
	for _, s := range e.plan.steps {
		switch s.kind {
		case stepKernel:
			kernels++
		case stepGemm:
			gemms++
		}
	}
	b.Logf("%v: %d instructions: %d kernels and %d products a step", dev, len(prog.Instructions()), kernels, gemms)
	synced := func(run func() error) func(b *testing.B) {
		return func(b *testing.B) {
			for range 10 {
				if err := run(); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if err := run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N), "µs/op")
		}
	}
	b.Run("step", synced(func() error {
		if err := m.Run(feeds[0]); err != nil {
			return err
		}
		_, err := m.Value(loss)
		return err
	}))
	b.Run("graph", synced(func() error {
		if err := e.Run(vm.RunOptions{}); err != nil {
			return err
		}
		return dev.be.sync()
	}))
	g := graph.New()
	x := g.Input("x", graph.Float32, 1)
	y := ops.Scale(x, 2)
	tiny, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		b.Fatal(err)
	}
	tm, err := vm.New(tiny, vm.OnDevice(dev))
	if err != nil {
		b.Fatal(err)
	}
	defer tm.Close()
	one := vm.Feeds{x: graph.NewDenseOf(x.Type())}
	b.Run("roundtrip", synced(func() error {
		if err := tm.Run(one); err != nil {
			return err
		}
		_, err := tm.Value(y)
		return err
	}))

	pm, err := vm.New(prog, vm.OnDevice(dev), vm.WithProfile())
	if err != nil {
		b.Fatal(err)
	}
	defer pm.Close()
	for range 50 {
		if err := pm.Run(feeds[0]); err != nil {
			b.Fatal(err)
		}
	}
	p := pm.Profile()
	b.Logf("profile, each instruction waited for: %v a step", p.Total()/50)
	for _, en := range p.ByTotal()[:10] {
		b.Logf("%8v  %-40s %v", en.Mean(), en.Op, en.Type)
	}
}
