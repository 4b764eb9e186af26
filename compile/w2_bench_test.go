package compile_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/cputime"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// w2Ops and w2Width size the W2 workload: a chain of cheap elementwise
// ops on a short vector, where running an op costs little beside
// dispatching it.
const (
	w2Ops   = 200
	w2Width = 16
)

// w2Graph builds sum(f(x)) for f a chain of w2Ops elementwise ops that
// keeps its values within a few units (multiply, shift, y/(|y|+1), scale,
// over and over), and its gradient with respect to x.
func w2Graph(dtype tensor.Dtype) (x *graph.Node, outputs []*graph.Node, feeds vm.Feeds) {
	rng := rand.New(rand.NewPCG(2, 2))
	g := graph.New()
	x = g.Input("x", dtype, w2Width)
	vector := func(lo, hi float64) *graph.Node {
		t := graph.NewDense(dtype, w2Width)
		for i := range w2Width {
			graph.SetFloat(t, i, lo+(hi-lo)*rng.Float64())
		}
		return g.Const(t)
	}
	c, d, one := vector(0.5, 1.5), vector(-1, 1), g.Scalar(1, dtype)
	y, n := x, 0
	for n < w2Ops {
		y = ops.Mul(y, c)
		y = ops.Add(y, d)
		y = ops.Div(y, ops.Add(ops.Abs(y), one))
		y = ops.Scale(y, 2)
		n += 6
	}
	loss := ops.Sum(y)
	grads, err := compile.Grad(loss, x)
	if err != nil {
		panic(err)
	}
	in := graph.NewDense(dtype, w2Width)
	for i := range w2Width {
		graph.SetFloat(in, i, rng.Float64()*2-1)
	}
	return x, []*graph.Node{loss, grads[0]}, vm.Feeds{x: in}
}

// BenchmarkW2 runs forward and backward through a chain of 200 cheap
// elementwise ops on a 16-element vector, with and without fusion, and
// reports the time per op of the chain (ns/graphop), the same in the
// thread's CPU time on Linux (cpu-ns/graphop: on a shared machine it
// leaves out the time spent waiting for a core), and the program's
// instructions. Sub-benchmark add16 times a plain loop adding two
// 16-element vectors, a yardstick of the machine's speed at the time.
func BenchmarkW2(b *testing.B) {
	b.Run("add16", func(b *testing.B) {
		var x, y, o [w2Width]float64
		cpu := startCPU()
		for b.Loop() {
			for i := range o {
				o[i] = x[i] + y[i]
			}
			x[0] = o[1]
		}
		cpu.report(b, 1, "cpu-ns/loop")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/loop")
	})
	for _, dtype := range []tensor.Dtype{graph.Float32, graph.Float64} {
		_, outputs, feeds := w2Graph(dtype)
		for _, c := range []struct {
			name string
			opts []compile.Option
		}{{"fused", nil}, {"unfused", []compile.Option{compile.WithoutPass("fuse")}}} {
			b.Run(fmt.Sprintf("%v/%s", dtype, c.name), func(b *testing.B) {
				p, err := compile.Compile(outputs, c.opts...)
				if err != nil {
					b.Fatal(err)
				}
				m, err := vm.New(p, vm.WithThreads(1))
				if err != nil {
					b.Fatal(err)
				}
				if err := m.Run(feeds); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				cpu := startCPU()
				for b.Loop() {
					if err := m.Run(feeds); err != nil {
						b.Fatal(err)
					}
				}
				cpu.report(b, w2Ops, "cpu-ns/graphop")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/w2Ops, "ns/graphop")
				b.ReportMetric(float64(len(p.Instructions())), "instrs")
			})
		}
	}
}

// cpuClock measures a benchmark loop's thread CPU time.
type cpuClock struct {
	start time.Duration
	ok    bool
}

// startCPU locks the goroutine to its thread (until the benchmark ends)
// and reads the thread's CPU time.
func startCPU() cpuClock {
	runtime.LockOSThread()
	t, ok := cputime.Thread()
	return cpuClock{t, ok}
}

// report adds the CPU time per iteration and per n units as a metric.
func (c cpuClock) report(b *testing.B, n int, unit string) {
	t, ok := cputime.Thread()
	if ok && c.ok {
		b.ReportMetric(float64((t-c.start).Nanoseconds())/float64(b.N)/float64(n), unit)
	}
}

// The W2 chain computes the same bits fused and unfused.
func TestW2Fused(t *testing.T) {
	for _, dtype := range []tensor.Dtype{graph.Float32, graph.Float64} {
		_, outputs, feeds := w2Graph(dtype)
		pr := problem{name: "W2", outputs: outputs, feeds: feeds}
		sameBits(t, "W2 "+dtype.String(), runProblem(t, pr, nil), runProblem(t, pr, []compile.Option{compile.WithoutPass("fuse")}))
	}
}
