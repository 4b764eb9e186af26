package bench

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Differential tests: the same graph, with the same values, differentiated
// by nabla and by Gorgonia, must give the same loss and first-order
// gradients. Gorgonia's higher orders are wrong (TestGorgoniaSecondDerivative),
// so only first order is compared.

// agreement is the tolerance between the two: both compute in float64, but
// in different orders (and Gorgonia takes the log of a softmax where nabla
// uses a log-softmax), so the last bits differ.
const agreement = 1e-12

// nablaGradients compiles loss and its gradients with respect to wrt, runs
// the program once and returns the loss and the gradients' values.
func nablaGradients(t *testing.T, loss *graph.Node, wrt []*graph.Node, feeds vm.Feeds) (float64, [][]float64) {
	t.Helper()
	grads, err := compile.Grad(loss, wrt...)
	if err != nil {
		t.Fatalf("nabla Grad: %v", err)
	}
	prog, err := compile.Compile(append([]*graph.Node{loss}, grads...))
	if err != nil {
		t.Fatalf("nabla Compile: %v", err)
	}
	m, err := vm.New(prog)
	if err != nil {
		t.Fatalf("nabla vm.New: %v", err)
	}
	if err := m.Run(feeds); err != nil {
		t.Fatalf("nabla Run: %v", err)
	}
	values := make([][]float64, len(grads))
	for i, gr := range grads {
		v, err := m.Value(gr)
		if err != nil {
			t.Fatalf("nabla Value: %v", err)
		}
		values[i] = graph.Float64s(v)
	}
	l, err := m.Value(loss)
	if err != nil {
		t.Fatalf("nabla Value: %v", err)
	}
	return graph.Float(l, 0), values
}

// gorgoniaGradients does the same with Gorgonia's symbolic Grad and its
// tape machine; every input already holds its value.
func gorgoniaGradients(t *testing.T, g *G.ExprGraph, loss *G.Node, wrt G.Nodes) (float64, [][]float64) {
	t.Helper()
	grads, err := G.Grad(loss, wrt...)
	if err != nil {
		t.Fatalf("gorgonia Grad: %v", err)
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatalf("gorgonia RunAll: %v", err)
	}
	values := make([][]float64, len(grads))
	for i, gr := range grads {
		values[i] = gorgoniaFloats(t, gr.Value())
	}
	return gorgoniaFloats(t, loss.Value())[0], values
}

// gorgoniaFloats returns a Gorgonia value's elements as float64.
func gorgoniaFloats(t *testing.T, v G.Value) []float64 {
	t.Helper()
	switch v := v.(type) {
	case *tensor.Dense:
		return graph.Float64s(v)
	case *G.F64:
		return []float64{float64(*v)}
	case *G.F32:
		return []float64{float64(*v)}
	}
	t.Fatalf("gorgonia value of unexpected type %T", v)
	return nil
}

// assertClose checks got against want elementwise, to tol relative to the
// larger of 1 and |want|.
func assertClose(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*math.Max(1, math.Abs(want[i]))) {
			t.Errorf("%s[%d]: got %.17g, want %.17g (difference %.3g)", what, i, got[i], want[i], d)
		}
	}
}

// compareWithGorgonia checks nabla's loss and gradients against Gorgonia's.
func compareWithGorgonia(t *testing.T, names []string, nLoss float64, nGrads [][]float64, gLoss float64, gGrads [][]float64) {
	t.Helper()
	assertClose(t, "loss", []float64{nLoss}, []float64{gLoss}, agreement)
	for i, name := range names {
		assertClose(t, "gradient of "+name, nGrads[i], gGrads[i], agreement)
	}
}

func TestMLPGradientsMatchGorgonia(t *testing.T) {
	d := newMLPData(8, 16, 4, 5, 1)
	n := buildNablaMLP(graph.Float64, d)
	gm, err := buildGorgoniaMLP(graph.Float64, d)
	if err != nil {
		t.Fatal(err)
	}
	nLoss, nGrads := nablaGradients(t, n.loss, n.params, n.feeds)
	gLoss, gGrads := gorgoniaGradients(t, gm.g, gm.loss, gm.params)
	// A cross-entropy of 4 balanced classes starts near log 4 ≈ 1.39.
	if nLoss < 0.5 || nLoss > 3 {
		t.Errorf("loss %v is far from log 4: the fixture is wrong", nLoss)
	}
	compareWithGorgonia(t, []string{"W1", "b1", "W2", "b2"}, nLoss, nGrads, gLoss, gGrads)
}

// elementwiseX is the point the elementwise chain is differentiated at.
var elementwiseX = []float64{-2.1, -0.7, -0.05, 0, 0.3, 1.1, 2.5}

func TestElementwiseChainGradientMatchesGorgonia(t *testing.T) {
	// f(x) = sum(exp(sin(x)·x) / (1 + x²)).
	g := graph.New()
	x := g.Input("x", graph.Float64, len(elementwiseX))
	one := g.Scalar(1, graph.Float64)
	f := ops.Sum(ops.Div(ops.Exp(ops.Mul(ops.Sin(x), x)), ops.Add(one, ops.Square(x))))
	nLoss, nGrads := nablaGradients(t, f, []*graph.Node{x}, vm.Feeds{x: mustDense(graph.Float64, elementwiseX, len(elementwiseX))})

	gg := G.NewGraph()
	var gx, gf *G.Node
	if err := gorgoniaBuild(func() {
		gx = G.NewVector(gg, G.Float64, G.WithName("x"), G.WithValue(mustDense(graph.Float64, elementwiseX, len(elementwiseX))))
		num := G.Must(G.Exp(G.Must(G.HadamardProd(G.Must(G.Sin(gx)), gx))))
		den := G.Must(G.Add(G.NewConstant(1.0), G.Must(G.Square(gx))))
		gf = G.Must(G.Sum(G.Must(G.HadamardDiv(num, den))))
	}); err != nil {
		t.Fatal(err)
	}
	gLoss, gGrads := gorgoniaGradients(t, gg, gf, G.Nodes{gx})

	// The hand-derived gradient, as a check on both:
	// f' = [e^(x sin x)(sin x + x cos x)(1+x²) − 2x e^(x sin x)] / (1+x²)².
	want := make([]float64, len(elementwiseX))
	for i, v := range elementwiseX {
		e, q := math.Exp(v*math.Sin(v)), 1+v*v
		want[i] = (e*(math.Sin(v)+v*math.Cos(v))*q - 2*v*e) / (q * q)
	}
	assertClose(t, "hand-derived gradient", nGrads[0], want, agreement)
	compareWithGorgonia(t, []string{"x"}, nLoss, nGrads, gLoss, gGrads)
}

func TestBroadcastAddGradientMatchesGorgonia(t *testing.T) {
	// f(A, b) = sum(tanh(A + b) ⊙ W): A is (3,4), the row vector b (4) is
	// added to each of A's rows, W is a constant weighting.
	a, b, w := uniform(7, 12, 2), uniform(8, 4, 1), uniform(9, 12, 1)
	g := graph.New()
	na := g.Input("A", graph.Float64, 3, 4)
	nb := g.Input("b", graph.Float64, 4)
	nw := g.Const(mustDense(graph.Float64, w, 3, 4))
	f := ops.Sum(ops.Mul(ops.Tanh(ops.Add(na, nb)), nw))
	nLoss, nGrads := nablaGradients(t, f, []*graph.Node{na, nb}, vm.Feeds{
		na: mustDense(graph.Float64, a, 3, 4),
		nb: mustDense(graph.Float64, b, 4),
	})

	gg := G.NewGraph()
	var ga, gb, gf *G.Node
	if err := gorgoniaBuild(func() {
		ga = G.NewMatrix(gg, G.Float64, G.WithName("A"), G.WithValue(mustDense(graph.Float64, a, 3, 4)))
		gb = G.NewMatrix(gg, G.Float64, G.WithName("b"), G.WithValue(mustDense(graph.Float64, b, 1, 4)))
		gw := G.NewConstant(mustDense(graph.Float64, w, 3, 4))
		sum := G.Must(G.BroadcastAdd(ga, gb, nil, []byte{0}))
		gf = G.Must(G.Sum(G.Must(G.HadamardProd(G.Must(G.Tanh(sum)), gw))))
	}); err != nil {
		t.Fatal(err)
	}
	gLoss, gGrads := gorgoniaGradients(t, gg, gf, G.Nodes{ga, gb})

	// By hand: ∂f/∂A = W ⊙ (1 − tanh²(A + b)), and ∂f/∂b sums it over rows.
	wantA, wantB := make([]float64, 12), make([]float64, 4)
	for i := range wantA {
		th := math.Tanh(a[i] + b[i%4])
		wantA[i] = w[i] * (1 - th*th)
		wantB[i%4] += wantA[i]
	}
	assertClose(t, "hand-derived gradient of A", nGrads[0], wantA, agreement)
	assertClose(t, "hand-derived gradient of b", nGrads[1], wantB, agreement)
	compareWithGorgonia(t, []string{"A", "b"}, nLoss, nGrads, gLoss, gGrads)
}

// TestGorgoniaSecondDerivative documents why only first derivatives are
// compared: d²/dx² x³ = 6x is 7.8 at x = 1.3, which nabla computes, while
// Gorgonia v0.9.18, differentiating its own first derivative, returns 2.6
// for x·x·x and 3.9 for Cube(x) (it reuses derivatives cached on the nodes
// by the first Grad). Pow(x, 3) happens to come out right.
func TestGorgoniaSecondDerivative(t *testing.T) {
	const x0, want = 1.3, 7.8 // 6·1.3

	g := graph.New()
	x := g.Input("x", graph.Float64)
	first, err := compile.Grad(ops.Mul(ops.Mul(x, x), x), x)
	if err != nil {
		t.Fatal(err)
	}
	feeds := vm.Feeds{x: mustDense(graph.Float64, []float64{x0})}
	_, second := nablaGradients(t, first[0], []*graph.Node{x}, feeds)
	assertClose(t, "nabla's d²/dx² x·x·x", second[0], []float64{want}, 1e-14)

	for _, c := range []struct {
		name string
		cube func(x *G.Node) (*G.Node, error)
		got  float64 // Gorgonia's second derivative
	}{
		{"x·x·x", func(x *G.Node) (*G.Node, error) {
			xx, err := G.Mul(x, x)
			if err != nil {
				return nil, err
			}
			return G.Mul(xx, x)
		}, 2.6},
		{"Cube(x)", G.Cube, 3.9},
		{"Pow(x, 3)", func(x *G.Node) (*G.Node, error) { return G.Pow(x, G.NewConstant(3.0)) }, want},
	} {
		gg := G.NewGraph()
		gx := G.NewScalar(gg, G.Float64, G.WithName("x"), G.WithValue(x0))
		y, err := c.cube(gx)
		if err != nil {
			t.Fatalf("case %v: %v", c.name, err)
		}
		d1, err := G.Grad(y, gx)
		if err != nil {
			t.Fatalf("case %v: %v", c.name, err)
		}
		_, d2 := gorgoniaGradients(t, gg, d1[0], G.Nodes{gx})
		if math.Abs(d2[0][0]-c.got) > 1e-12 {
			t.Errorf("case %v: Gorgonia's second derivative is %v, documented as %v (want %v)", c.name, d2[0][0], c.got, want)
		}
	}
}
