package compile_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/testnet"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// problem is a graph to compile and run: outputs, updates and feeds.
type problem struct {
	name    string
	outputs []*graph.Node
	updates map[*graph.Node]*graph.Node
	feeds   vm.Feeds
	params  []*graph.Node
}

// TestSwitchingOffPasses: every optional pass can be switched off, alone
// or with all the others, and the machine computes the same outputs and
// parameter updates, run after run, as with every pass on.
func TestSwitchingOffPasses(t *testing.T) {
	problems := []problem{mlpProblem(t)}
	for seed := range uint64(20) {
		problems = append(problems, randomProblem(t, seed, false), randomProblem(t, seed, true))
	}
	configs := map[string][]compile.Option{"no optional pass": nil}
	for _, name := range compile.OptionalPasses() {
		configs["without "+name] = []compile.Option{compile.WithoutPass(name)}
		configs["no optional pass"] = append(configs["no optional pass"], compile.WithoutPass(name))
	}
	for _, pr := range problems {
		want := runProblem(t, pr, nil)
		for name, opts := range configs {
			got := runProblem(t, pr, opts)
			for i := range want {
				if err := sameValues(got[i], want[i]); err != nil {
					t.Errorf("case %s, %s: value %d: %v", pr.name, name, i, err)
				}
			}
		}
	}
}

// runProblem compiles pr with checks and runs it twice, returning the
// outputs and parameters after each run.
func runProblem(t *testing.T, pr problem, opts []compile.Option) [][]float64 {
	t.Helper()
	p, err := compile.Compile(pr.outputs, append(opts, compile.WithChecks(), compile.WithUpdates(pr.updates))...)
	if err != nil {
		t.Fatalf("case %s: %v", pr.name, err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatalf("case %s: %v", pr.name, err)
	}
	var got [][]float64
	for range 2 {
		if err := m.Run(pr.feeds); err != nil {
			t.Fatalf("case %s: %v", pr.name, err)
		}
		for _, o := range pr.outputs {
			v, err := m.Value(o)
			if err != nil {
				t.Fatalf("case %s: %v", pr.name, err)
			}
			if !graph.TypeOf(v.Dtype(), v.Shape()...).Equal(o.Type()) {
				t.Fatalf("case %s: output %v has type %v%v", pr.name, o, v.Dtype(), v.Shape())
			}
			got = append(got, graph.Float64s(v))
		}
		for _, w := range pr.params {
			v, err := m.Get(w)
			if err != nil {
				t.Fatalf("case %s: %v", pr.name, err)
			}
			got = append(got, graph.Float64s(v))
		}
	}
	return got
}

// sameValues compares to a relative 1e-12: matmuladd rounds a product and
// a sum once where the plain program rounds twice. NaNs and infinities
// must match.
func sameValues(got, want []float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("got %d values, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		switch {
		case math.IsNaN(w) || math.IsInf(w, 0):
			if fmt.Sprint(g) != fmt.Sprint(w) {
				return fmt.Errorf("element %d: got %v, want %v", i, g, w)
			}
		case math.Abs(g-w) > 1e-12*math.Max(1, math.Abs(w)):
			return fmt.Errorf("element %d: got %v, want %v", i, g, w)
		}
	}
	return nil
}

// randomProblem builds a random graph of elementwise, shape and matrix
// ops over inputs, a parameter and constants (0, 1 and powers of two, so
// that simplifications are exact), with three outputs and an update of the
// parameter; with grad, the outputs are the gradients of their sum.
func randomProblem(t *testing.T, seed uint64, grad bool) problem {
	rng := rand.New(rand.NewPCG(1, seed))
	g := graph.New()
	a := g.Input("a", graph.Float64, 2, 3)
	b := g.Input("b", graph.Float64, 3)
	w := g.Param("w", testnet.RandomDense(rng, 2, 3))
	pr := problem{
		name:   fmt.Sprintf("random %d grad=%v", seed, grad),
		feeds:  vm.Feeds{a: testnet.RandomDense(rng, 2, 3), b: testnet.RandomDense(rng, 3)},
		params: []*graph.Node{w},
	}
	pool := []*graph.Node{a, b, w, g.Scalar(0, graph.Float64), g.Scalar(1, graph.Float64), g.Scalar(2, graph.Float64),
		g.Const(testnet.RandomDense(rng, 3)), g.Const(testnet.RandomDense(rng, 2, 3))}
	pick := func() *graph.Node { return pool[rng.IntN(len(pool))] }
	full := func() *graph.Node { // a (2,3) node
		for {
			if n := pick(); n.Type().Rank() == 2 {
				return n
			}
		}
	}
	scales := []float64{1, 2, 0.5, -1}
	unary := []func(*graph.Node) *graph.Node{
		ops.Neg, ops.Tanh, ops.Sin, ops.Square, ops.Identity, ops.StopGradient,
		func(x *graph.Node) *graph.Node { return ops.Scale(x, scales[rng.IntN(len(scales))]) },
		func(x *graph.Node) *graph.Node { return ops.Mul(x, ops.Neg(ops.Neg(x))) },
	}
	binary := []func(x, y *graph.Node) *graph.Node{ops.Add, ops.Sub, ops.Mul}
	shaped := []func(x *graph.Node) *graph.Node{ // (2,3) to (2,3)
		func(x *graph.Node) *graph.Node { return ops.Reshape(ops.Reshape(x, 6), 2, 3) },
		func(x *graph.Node) *graph.Node { return ops.Reshape(ops.Transpose(ops.Reshape(x, 3, 2)), 2, 3) },
		func(x *graph.Node) *graph.Node { return ops.Transpose(ops.Transpose(x)) },
		func(x *graph.Node) *graph.Node { return ops.BroadcastTo(ops.SumTo(x, 3), 2, 3) },
		func(x *graph.Node) *graph.Node {
			return ops.Transpose(ops.MatMul(ops.MatMul(ops.Transpose(x), x), ops.Transpose(x)))
		},
	}
	for range 30 {
		var n *graph.Node
		switch r := rng.IntN(10); {
		case r < 4:
			n = unary[rng.IntN(len(unary))](pick())
		case r < 8:
			n = binary[rng.IntN(len(binary))](pick(), pick())
		default:
			n = shaped[rng.IntN(len(shaped))](full())
		}
		pool = append(pool, n)
	}
	outs := pool[len(pool)-3:]
	if grad {
		var sum *graph.Node
		for _, o := range outs {
			s := ops.Sum(o)
			if sum != nil {
				s = ops.Add(sum, s)
			}
			sum = s
		}
		grads, err := compile.GradWith(sum, []*graph.Node{a, w}, compile.ZerosIfDisconnected())
		if err != nil {
			t.Fatalf("case %s: %v", pr.name, err)
		}
		outs = append(grads, sum)
	}
	pr.outputs = outs
	pr.updates = map[*graph.Node]*graph.Node{w: ops.Sub(w, ops.Scale(ops.Tanh(full()), 0.125))}
	if err := g.Err(); err != nil {
		t.Fatalf("case %s: %v", pr.name, err)
	}
	return pr
}

func mlpProblem(t *testing.T) problem {
	m, err := testnet.NewMLP(rand.New(rand.NewPCG(1, 100)), 4, 5, 6, 3)
	if err != nil {
		t.Fatal(err)
	}
	return problem{
		name:    "mlp",
		outputs: append([]*graph.Node{m.Loss}, m.Grads...),
		updates: m.Updates,
		feeds:   m.Feeds,
		params:  m.Params,
	}
}

// TestHessianWithPasses: a second derivative, whose graph has more to
// simplify, computes the same with and without the passes.
func TestHessianWithPasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 7))
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	w := g.Const(testnet.RandomDense(rng, 3, 3))
	f := ops.Sum(ops.Tanh(ops.MatMul(ops.Reshape(x, 1, 3), w)))
	h, err := compile.Hessian(f, x)
	if err != nil {
		t.Fatal(err)
	}
	pr := problem{name: "hessian", outputs: []*graph.Node{h, f}, feeds: vm.Feeds{x: testnet.RandomDense(rng, 3)}}
	var off []compile.Option
	for _, name := range compile.OptionalPasses() {
		off = append(off, compile.WithoutPass(name))
	}
	want, got := runProblem(t, pr, off), runProblem(t, pr, nil)
	for i := range want {
		if err := sameValues(got[i], want[i]); err != nil {
			t.Errorf("value %d: %v", i, err)
		}
	}
}
