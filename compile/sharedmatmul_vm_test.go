package compile_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// twoLayerNet is f(x) = sum(tanh(tanh(x·W1 + b1)·W2 + b2)) on a (1, in) row
// x, with odd sizes in → hidden → out, its weights constants (so the
// gradient's products by W1ᵀ and W2ᵀ read them as stored) or parameters.
type twoLayerNet struct {
	g       *graph.Graph
	x, v, f *graph.Node
	x0, v0  []float64
}

func newTwoLayerNet(dtype tensor.Dtype, params bool, in, hidden, out int) *twoLayerNet {
	rng := rand.New(rand.NewPCG(11, 12))
	random := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.Float64()*2 - 1
		}
		return v
	}
	n := &twoLayerNet{g: graph.New(), x0: random(in), v0: random(in)}
	leaf := func(name string, shape ...int) *graph.Node {
		t := must(graph.FromFloat64s(dtype, random(graph.ShapeSize(shape)), shape...))
		if params {
			return n.g.Param(name, t)
		}
		return n.g.Const(t)
	}
	w1, b1, w2, b2 := leaf("w1", in, hidden), leaf("b1", hidden), leaf("w2", hidden, out), leaf("b2", out)
	n.x = n.g.Input("x", dtype, 1, in)
	n.v = n.g.Input("v", dtype, 1, in)
	h := ops.Tanh(ops.Add(ops.MatMul(n.x, w1), b1))
	n.f = ops.Sum(ops.Tanh(ops.Add(ops.MatMul(h, w2), b2)))
	return n
}

// feeds are x0 and v0 in dtype, x moved by step·v.
func (n *twoLayerNet) feeds(step float64) vm.Feeds {
	x := make([]float64, len(n.x0))
	for i := range x {
		x[i] = n.x0[i] + step*n.v0[i]
	}
	dtype := n.x.Type().DType
	return vm.Feeds{
		n.x: must(graph.FromFloat64s(dtype, x, 1, len(x))),
		n.v: must(graph.FromFloat64s(dtype, n.v0, 1, len(x))),
	}
}

// runFloats compiles outs with opts and runs the program once on feeds.
func runFloats(t *testing.T, outs []*graph.Node, feeds vm.Feeds, opts ...compile.Option) (*compile.Program, [][]float64) {
	t.Helper()
	p := must(compile.Compile(outs, append(opts, compile.WithChecks())...))
	m := must(vm.New(p))
	defer m.Close()
	if err := m.Run(feeds); err != nil {
		t.Fatal(err)
	}
	var vals [][]float64
	for _, o := range outs {
		vals = append(vals, graph.Float64s(must(m.Value(o))))
	}
	return p, vals
}

// The Hessian–vector product computes its products that share a weight
// together, and gives the values it gives without the pass, bit for bit,
// and those of finite differences of the gradient: both dtypes, odd
// sizes, constant weights (every product by W1, W2, W2ᵀ in pairs) and
// parameters (the products by W1 and W2 in pairs; those by the transposes
// are read transposed, and stay).
func TestSharedMatMulHVP(t *testing.T) {
	for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
		for _, params := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/params=%v", dtype, params), func(t *testing.T) {
				n := newTwoLayerNet(dtype, params, 5, 7, 3)
				hv := must(compile.HVP(n.f, n.x, n.v))
				p, got := runFloats(t, []*graph.Node{hv}, n.feeds(0))
				shared := 3
				if params {
					shared = 2
				}
				if c := countOp(p, "SharedMatMul"); c != shared {
					t.Errorf("%d SharedMatMul instructions, want %d, in\n%v", c, shared, p)
				}
				q, want := runFloats(t, []*graph.Node{hv}, n.feeds(0), compile.WithoutPass("sharedmatmul"))
				if c := countOp(q, "SharedMatMul"); c != 0 {
					t.Errorf("%d SharedMatMul instructions without the pass", c)
				}
				for i := range want[0] {
					if got[0][i] != want[0][i] {
						t.Fatalf("H·v[%d] = %v, %v without the pass", i, got[0][i], want[0][i])
					}
				}
				// (∇f(x + εv) − ∇f(x − εv)) / 2ε, in float64.
				m := newTwoLayerNet(graph.Float64, params, 5, 7, 3)
				gr := must(compile.Grad(m.f, m.x))[0]
				const eps = 1e-5
				_, up := runFloats(t, []*graph.Node{gr}, m.feeds(eps))
				_, down := runFloats(t, []*graph.Node{gr}, m.feeds(-eps))
				tol := 1e-8
				if dtype == graph.Float32 {
					tol = 1e-5
				}
				for i := range got[0] {
					fd := (up[0][i] - down[0][i]) / (2 * eps)
					if math.Abs(got[0][i]-fd) > tol*(1+math.Abs(fd)) {
						t.Errorf("H·v[%d] = %v, finite differences %v", i, got[0][i], fd)
					}
				}
			})
		}
	}
}

// Products sharing a matrix stay apart where computing them at once would
// put a product before what it reads: y2 = (x·W)·W reads y1 = x·W, so
// only y1 and v·W go together; and z3 = tanh(v·B)·A with z4 = tanh(x·A)·B
// would make x·A and z3 (sharing A) wait on v·B, and v·B and z4 (sharing
// B) on x·A, so only the first pair goes together; so would tanh(x·A)·B
// with v·B once x·A goes with tanh(v·B)·A. Five rows by one matrix are
// four and one.
func TestSharedMatMulKeepsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	g := graph.New()
	mat := func(r, c int) *graph.Node {
		v := make([]float64, r*c)
		for i := range v {
			v[i] = rng.Float64()*2 - 1
		}
		return g.Const(must(graph.FromFloat64s(graph.Float64, v, r, c)))
	}
	x, v := g.Input("x", graph.Float64, 1, 4), g.Input("v", graph.Float64, 1, 4)
	w, a, b := mat(4, 4), mat(4, 4), mat(4, 4)
	y1 := ops.MatMul(x, w)
	chain := []*graph.Node{y1, ops.MatMul(y1, w), ops.MatMul(v, w)}
	z1, z2 := ops.MatMul(x, a), ops.MatMul(v, b)
	crossed := []*graph.Node{z1, z2, ops.MatMul(ops.Tanh(z2), a), ops.MatMul(ops.Tanh(z1), b)}
	u1 := ops.MatMul(x, a)
	u2, u3 := ops.MatMul(ops.Tanh(u1), b), ops.MatMul(v, b)
	back := []*graph.Node{u1, u2, u3, ops.MatMul(ops.Tanh(u3), a)}
	c := mat(4, 3)
	var five []*graph.Node
	for i := range 5 {
		five = append(five, ops.MatMul(ops.Scale(x, float64(i+1)), c))
	}
	feeds := vm.Feeds{
		x: must(graph.FromFloat64s(graph.Float64, []float64{0.5, -1, 2, 0.25}, 1, 4)),
		v: must(graph.FromFloat64s(graph.Float64, []float64{-0.75, 1.5, 0.125, 1}, 1, 4)),
	}
	for _, tc := range []struct {
		name          string
		outs          []*graph.Node
		shared, alone int
	}{{"chain", chain, 1, 1}, {"crossed", crossed, 1, 2}, {"back", back, 1, 2}, {"five", five, 1, 1}} {
		p, got := runFloats(t, tc.outs, feeds)
		if s, m := countOp(p, "SharedMatMul"), countOp(p, "MatMul"); s != tc.shared || m != tc.alone {
			t.Errorf("%s: %d SharedMatMul and %d MatMul, want %d and %d, in\n%v", tc.name, s, m, tc.shared, tc.alone, p)
		}
		_, want := runFloats(t, tc.outs, feeds, compile.WithoutPass("sharedmatmul"))
		for i := range want {
			for j := range want[i] {
				if got[i][j] != want[i][j] {
					t.Fatalf("%s: output %d[%d] = %v, %v without the pass", tc.name, i, j, got[i][j], want[i][j])
				}
			}
		}
	}
}

// A machine runs the rewritten Hessian–vector product without
// allocating.
func TestSharedMatMulAllocatesNothing(t *testing.T) {
	n := newTwoLayerNet(graph.Float64, false, 5, 7, 3)
	hv := must(compile.HVP(n.f, n.x, n.v))
	m := must(vm.New(must(compile.Compile([]*graph.Node{hv}))))
	defer m.Close()
	feeds := n.feeds(0)
	if err := m.Run(feeds); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(20, func() { _ = m.Run(feeds) }); a != 0 {
		t.Fatalf("%v allocations a run", a)
	}
}

// A chain of a thousand products by one matrix, each reading the one
// before (an unrolled recurrence), has no products to compute together,
// and looking for them costs little: the pass does not try every product
// against every other, each search a walk through the chain (which took
// 74 s where the rest of compilation takes 20 ms).
func TestSharedMatMulChainCompilesQuickly(t *testing.T) {
	g := graph.New()
	w := g.Const(must(graph.FromFloat64s(graph.Float64, []float64{0.5, -0.25, 0.125, 1}, 2, 2)))
	x := g.Input("x", graph.Float64, 1, 2)
	h := x
	for range 1000 {
		h = ops.Tanh(ops.MatMul(h, w))
	}
	var took [2]time.Duration
	for i, opts := range [][]compile.Option{{compile.WithoutPass("sharedmatmul")}, nil} {
		start := time.Now()
		p := must(compile.Compile([]*graph.Node{h}, opts...))
		took[i] = time.Since(start)
		if c := countOp(p, "SharedMatMul"); c != 0 {
			t.Fatalf("%d SharedMatMul instructions in a chain", c)
		}
	}
	if took[1] > 10*took[0]+2*time.Second {
		t.Fatalf("compiling took %v with the pass, %v without", took[1], took[0])
	}
}
