package ops_test

import (
	"fmt"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// scanModel is a tanh RNN over T steps (batch 4, hidden 16) with its
// gradient with respect to the weight: the graph is the same size for
// every T.
func scanModel(T int) (outs []*graph.Node, xs *graph.Node) {
	g := graph.New()
	W := g.Param("W", graph.NewDense(graph.Float32, 16, 16))
	h0 := g.Param("h0", graph.NewDense(graph.Float32, 4, 16))
	xs = g.Input("xs", graph.Float32, T, 4, 16)
	final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return []*graph.Node{ops.Tanh(ops.Add(ops.MatMul(c[0], W), x[0]))}, nil
	}, []*graph.Node{h0}, []*graph.Node{xs})
	loss := ops.Sum(final[0])
	grads, err := compile.Grad(loss, W)
	if err != nil {
		panic(err)
	}
	return []*graph.Node{loss, grads[0]}, xs
}

// BenchmarkScanCompile builds, differentiates and compiles a Scan of T
// steps: the time does not depend on T.
func BenchmarkScanCompile(b *testing.B) {
	for _, T := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("T=%d", T), func(b *testing.B) {
			for range b.N {
				outs, _ := scanModel(T)
				if _, err := compile.Compile(outs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScanRun runs the forward and backward loops over T steps: the
// time grows linearly with T (compare ns/step).
func BenchmarkScanRun(b *testing.B) {
	for _, T := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("T=%d", T), func(b *testing.B) {
			outs, xs := scanModel(T)
			p, err := compile.Compile(outs)
			if err != nil {
				b.Fatal(err)
			}
			m, err := vm.New(p, vm.WithThreads(1))
			if err != nil {
				b.Fatal(err)
			}
			feeds := vm.Feeds{xs: graph.NewDense(graph.Float32, T, 4, 16)}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := m.Run(feeds); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*T), "ns/step")
		})
	}
}
