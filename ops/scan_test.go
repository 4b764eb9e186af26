package ops_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// scanCase is a loop built two ways: as a Scan, and unrolled into T copies
// of its body (the independent reference). build returns the loss and the
// nodes to differentiate it with respect to.
type scanCase struct {
	name  string
	build func(g *graph.Graph, loop loopFunc) (loss *graph.Node, wrt []*graph.Node)
}

// loopFunc runs a body over sequences: ops.Scan or unrolled.
type loopFunc func(body ops.ScanBody, init, xs []*graph.Node, opts ...ops.ScanOption) ([]*graph.Node, []*graph.Node)

// unrolled is the loop written out: body applied T times to slices of xs,
// the outputs concatenated.
func unrolled(body ops.ScanBody, init, xs []*graph.Node, opts ...ops.ScanOption) ([]*graph.Node, []*graph.Node) {
	T := xs[0].Shape()[0]
	carry := init
	var steps [][]*graph.Node
	for t := range T {
		x := make([]*graph.Node, len(xs))
		for i, s := range xs {
			x[i] = ops.Reshape(ops.Slice(s, 0, t, t+1), s.Shape()[1:]...)
		}
		var y []*graph.Node
		carry, y = body(carry, x)
		steps = append(steps, y)
	}
	if len(steps[0]) == 0 {
		return carry, nil
	}
	ys := make([]*graph.Node, len(steps[0]))
	for j := range ys {
		parts := make([]*graph.Node, T)
		for t := range T {
			y := steps[t][j]
			parts[t] = ops.Reshape(y, append([]int{1}, y.Shape()...)...)
		}
		ys[j] = ops.Concat(0, parts...)
	}
	return carry, ys
}

func randParam(g *graph.Graph, rng *rand.Rand, name string, scale float64, shape ...int) *graph.Node {
	n := graph.ShapeSize(shape)
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * (2*rng.Float64() - 1)
	}
	d, _ := graph.FromFloat64s(graph.Float64, v, shape...)
	return g.Param(name, d)
}

var scanCases = []scanCase{
	{"tanh rnn with matmul", func(g *graph.Graph, loop loopFunc) (*graph.Node, []*graph.Node) {
		rng := rand.New(rand.NewPCG(1, 2))
		W := randParam(g, rng, "W", 0.5, 3, 3)
		U := randParam(g, rng, "U", 0.5, 2, 3)
		h0 := randParam(g, rng, "h0", 0.5, 2, 3)
		xs := randParam(g, rng, "xs", 1, 5, 2, 2)
		final, ys := loop(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			h := ops.Tanh(ops.Add(ops.MatMul(c[0], W), ops.MatMul(x[0], U)))
			return []*graph.Node{h}, []*graph.Node{ops.Mul(h, h)}
		}, []*graph.Node{h0}, []*graph.Node{xs})
		loss := ops.Add(ops.Sum(ops.Mul(final[0], final[0])), ops.Sum(ops.Sin(ys[0])))
		return loss, []*graph.Node{W, U, h0, xs}
	}},
	{"carried tuple with products", func(g *graph.Graph, loop loopFunc) (*graph.Node, []*graph.Node) {
		rng := rand.New(rand.NewPCG(3, 4))
		a := randParam(g, rng, "a", 0.8, 4)
		b0 := randParam(g, rng, "b0", 0.8, 4)
		c0 := randParam(g, rng, "c0", 0.8, 4)
		xs := randParam(g, rng, "xs", 0.8, 6, 4)
		ks := randParam(g, rng, "ks", 0.8, 6)
		final, ys := loop(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			b := ops.Add(ops.Mul(c[0], ops.Sigmoid(c[1])), ops.Mul(x[0], a))
			cc := ops.Tanh(ops.Add(ops.Mul(c[1], x[1]), b))
			return []*graph.Node{b, cc}, []*graph.Node{ops.Sum(ops.Mul(b, cc))}
		}, []*graph.Node{b0, c0}, []*graph.Node{xs, ks})
		loss := ops.Add(ops.Sum(ops.Mul(final[0], final[1])), ops.Sum(ops.Tanh(ys[0])))
		return loss, []*graph.Node{a, b0, c0, xs, ks}
	}},
	{"final carry only, w.r.t. the initial carry", func(g *graph.Graph, loop loopFunc) (*graph.Node, []*graph.Node) {
		// Higher orders reach the Scan through its stored carries alone.
		rng := rand.New(rand.NewPCG(5, 6))
		h0 := randParam(g, rng, "h0", 0.5, 2)
		xs := randParam(g, rng, "xs", 1, 3, 2)
		final, _ := loop(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			return []*graph.Node{ops.Mul(ops.Sin(c[0]), x[0])}, nil
		}, []*graph.Node{h0}, []*graph.Node{xs})
		return ops.Sum(final[0]), []*graph.Node{h0}
	}},
}

// derivatives builds the loss, its gradient, a Hessian–vector product
// and a third-order product, and returns their values.
func derivatives(t *testing.T, c scanCase, loop loopFunc) [][]float64 {
	t.Helper()
	g := graph.New()
	loss, wrt := c.build(g, loop)
	g1, err := compile.Grad(loss, wrt...)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	dot := func(xs []*graph.Node) *graph.Node {
		var s *graph.Node
		for _, x := range xs {
			v := make([]float64, x.Type().Size())
			for i := range v {
				v[i] = rng.Float64() - 0.5
			}
			d, _ := graph.FromFloat64s(graph.Float64, v, x.Shape()...)
			term := ops.Sum(ops.Mul(x, g.Const(d)))
			if s == nil {
				s = term
			} else {
				s = ops.Add(s, term)
			}
		}
		return s
	}
	g2, err := compile.GradWith(dot(g1), wrt, compile.ZerosIfDisconnected())
	if err != nil {
		t.Fatal(err)
	}
	g3, err := compile.GradWith(dot(g2), wrt, compile.ZerosIfDisconnected())
	if err != nil {
		t.Fatal(err)
	}
	return run(t, append(append(append([]*graph.Node{loss}, g1...), g2...), g3...), nil)
}

func TestScanMatchesUnrolledToThirdOrder(t *testing.T) {
	for _, c := range scanCases {
		t.Run(c.name, func(t *testing.T) {
			want := derivatives(t, c, unrolled)
			got := derivatives(t, c, ops.Scan)
			for i := range want {
				for j := range want[i] {
					if d := math.Abs(got[i][j] - want[i][j]); d > 1e-12*max(1, math.Abs(want[i][j])) {
						t.Fatalf("output %d entry %d: scan %v, unrolled %v", i, j, got[i][j], want[i][j])
					}
				}
			}
		})
	}
}
