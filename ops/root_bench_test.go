package ops_test

import (
	"fmt"
	"math"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// fixedPointSteps is how many iterations x ← tanh(x·W)/2 + b takes to
// converge (to 1e-14) in rootModel: the unrolled loop runs as many.
const fixedPointSteps = 30

// rootModel is x = tanh(x·W)/2 + b for n unknowns, a loss of x and its
// gradient with respect to W and b, x solved by FixedPoint (dense or
// matrix-free derivatives) or, "unrolled", by a Scan of fixedPointSteps
// iterations differentiated through.
func rootModel(n int, how string) []*graph.Node {
	g := graph.New()
	w, bv := make([]float64, n*n), make([]float64, n)
	for i := range w {
		w[i] = 0.9 * math.Sin(float64(3*i+1)) / math.Sqrt(float64(n))
	}
	for i := range bv {
		bv[i] = math.Cos(float64(i))
	}
	W := g.Param("W", must(graph.FromFloat64s(graph.Float64, w, n, n)))
	b := g.Param("b", must(graph.FromFloat64s(graph.Float64, bv, 1, n)))
	T := func(x *graph.Node) *graph.Node { return ops.Add(ops.Scale(ops.Tanh(ops.MatMul(x, W)), 0.5), b) }
	var x *graph.Node
	switch how {
	case "unrolled":
		final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
			return []*graph.Node{T(c[0])}, nil
		}, []*graph.Node{b}, nil, ops.Steps(fixedPointSteps))
		x = final[0]
	case "dense":
		x = ops.FixedPoint(T, b, 1e-14, 200, ops.DenseUpTo(n))
	case "matrix-free":
		x = ops.FixedPoint(T, b, 1e-14, 200, ops.DenseUpTo(0))
	}
	loss := ops.Sum(ops.Mul(x, ops.Sin(b)))
	grads, err := compile.Grad(loss, W, b)
	if err != nil {
		panic(err)
	}
	return append([]*graph.Node{loss}, grads...)
}

func must(t *tensor.Dense, err error) *tensor.Dense {
	if err != nil {
		panic(err)
	}
	return t
}

// BenchmarkRootGradient runs a loss and its gradient through the root of
// a system of n unknowns: by FixedPoint, differentiated by the implicit
// function theorem with ∂F/∂x dense or matrix-free, and by the same
// iterations unrolled in a Scan and differentiated through.
func BenchmarkRootGradient(b *testing.B) {
	for _, n := range []int{8, 64, 256} {
		for _, how := range []string{"unrolled", "dense", "matrix-free"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, how), func(b *testing.B) {
				p, err := compile.Compile(rootModel(n, how))
				if err != nil {
					b.Fatal(err)
				}
				m, err := vm.New(p, vm.WithThreads(1))
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if err := m.Run(nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
