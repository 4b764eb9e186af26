package ops

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

func TestSoftmaxForward(t *testing.T) {
	// Row [1 2 3]: softmax is e^(k-3)/S with S = 1+e^-1+e^-2, and
	// log-softmax (k-3) - log S.
	s := 1 + math.Exp(-1) + math.Exp(-2)
	logS := math.Log(s)
	m23 := values{[]int{2, 3}, []float64{1, 2, 3, 1, 1, 1}}
	cols := values{[]int{2, 3}, []float64{1, 2, 3, 4, 5, 6}} // columns differ by 3
	// t222[i][j][k] = 4i+2j+k: along j the pairs are (v, v+2).
	t222 := arange(2, 2, 2)
	lo, hi := 1/(1+math.Exp(2)), math.Exp(2)/(1+math.Exp(2))
	softmaxAt := func(axis int) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return Softmax(xs[0], axis) }
	}
	logSoftmaxAt := func(axis int) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return LogSoftmax(xs[0], axis) }
	}
	third := 1.0 / 3
	runForward(t, []forwardCase{
		{"Softmax last axis", []values{m23}, softmaxAt(1), []int{2, 3},
			[]float64{math.Exp(-2) / s, math.Exp(-1) / s, 1 / s, third, third, third}},
		{"Softmax -1", []values{m23}, softmaxAt(-1), []int{2, 3},
			[]float64{math.Exp(-2) / s, math.Exp(-1) / s, 1 / s, third, third, third}},
		// each column (v, v+3): 1/(1+e^3), e^3/(1+e^3)
		{"Softmax axis 0", []values{cols}, softmaxAt(0), []int{2, 3},
			[]float64{1 / (1 + math.Exp(3)), 1 / (1 + math.Exp(3)), 1 / (1 + math.Exp(3)),
				1 / (1 + math.Exp(-3)), 1 / (1 + math.Exp(-3)), 1 / (1 + math.Exp(-3))}},
		{"Softmax middle axis", []values{t222}, softmaxAt(1), []int{2, 2, 2}, []float64{lo, lo, hi, hi, lo, lo, hi, hi}},
		{"Softmax vector", []values{{[]int{3}, []float64{1, 2, 3}}}, softmaxAt(0), []int{3},
			[]float64{math.Exp(-2) / s, math.Exp(-1) / s, 1 / s}},
		// (1000, 1001): 1/(1+e), e/(1+e), no overflow
		{"Softmax large", []values{{[]int{1, 2}, []float64{1000, 1001}}}, softmaxAt(1), []int{1, 2},
			[]float64{1 / (1 + math.E), math.E / (1 + math.E)}},
		// e^-1000 underflows to 0, not NaN
		{"Softmax -large", []values{{[]int{1, 2}, []float64{-1000, 0}}}, softmaxAt(1), []int{1, 2}, []float64{0, 1}},
		{"Softmax size-1 axis", []values{{[]int{2, 1}, []float64{-7, 5}}}, softmaxAt(1), []int{2, 1}, []float64{1, 1}},
		{"Softmax empty axis", []values{{[]int{2, 0}, nil}}, softmaxAt(1), []int{2, 0}, nil},
		{"Softmax empty batch", []values{{[]int{0, 3}, nil}}, softmaxAt(1), []int{0, 3}, nil},

		{"LogSoftmax last axis", []values{m23}, logSoftmaxAt(1), []int{2, 3},
			[]float64{-2 - logS, -1 - logS, -logS, -math.Log(3), -math.Log(3), -math.Log(3)}},
		// column (v, v+3): -log(1+e^3), 3-log(1+e^3)
		{"LogSoftmax axis -2", []values{cols}, logSoftmaxAt(-2), []int{2, 3},
			[]float64{-math.Log1p(math.Exp(3)), -math.Log1p(math.Exp(3)), -math.Log1p(math.Exp(3)),
				3 - math.Log1p(math.Exp(3)), 3 - math.Log1p(math.Exp(3)), 3 - math.Log1p(math.Exp(3))}},
		{"LogSoftmax middle axis", []values{t222}, logSoftmaxAt(1), []int{2, 2, 2},
			[]float64{math.Log(lo), math.Log(lo), math.Log(hi), math.Log(hi), math.Log(lo), math.Log(lo), math.Log(hi), math.Log(hi)}},
		// (1000, 1001): -log(1+e), 1-log(1+e)
		{"LogSoftmax large", []values{{[]int{2}, []float64{1000, 1001}}}, logSoftmaxAt(0), []int{2},
			[]float64{-math.Log1p(math.E), 1 - math.Log1p(math.E)}},
		// log(e^-1000/(1+e^-1000)) = -1000, where log(softmax) would be -Inf
		{"LogSoftmax -large", []values{{[]int{2}, []float64{-1000, 0}}}, logSoftmaxAt(0), []int{2}, []float64{-1000, 0}},
		{"LogSoftmax size-1 axis", []values{{[]int{2, 1}, []float64{-7, 5}}}, logSoftmaxAt(-1), []int{2, 1}, []float64{0, 0}},
	})
}

func TestCrossEntropyForward(t *testing.T) {
	logS := math.Log(1 + math.Exp(-1) + math.Exp(-2))
	logits := values{[]int{2, 3}, []float64{1, 2, 3, 1, 1, 1}}
	ce := func(xs ...*graph.Node) *graph.Node { return CrossEntropy(xs[0], xs[1]) }
	ceOneHot := func(xs ...*graph.Node) *graph.Node { return CrossEntropyOneHot(xs[0], xs[1]) }
	runForward(t, []forwardCase{
		// row 0: log(e+e^2+e^3) - 3 = log S; row 1: log(3e) - 1 = log 3
		{"CrossEntropy", []values{logits, {[]int{2}, []float64{2, 0}}}, ce, []int{2}, []float64{logS, math.Log(3)}},
		// log(e^1+e^2+e^3) - 1 = 2 + log S
		{"CrossEntropy class 0", []values{logits, {[]int{2}, []float64{0, 1}}}, ce, []int{2}, []float64{2 + logS, math.Log(3)}},
		// log(e^1000+e^0) - 0 = 1000 (+ log(1+e^-1000), lost to rounding)
		{"CrossEntropy large", []values{{[]int{2, 2}, []float64{1000, 0, 1000, 0}}, {[]int{2}, []float64{1, 0}}}, ce,
			[]int{2}, []float64{1000, 0}},
		{"CrossEntropy one class", []values{{[]int{2, 1}, []float64{5, -5}}, {[]int{2}, []float64{0, 0}}}, ce,
			[]int{2}, []float64{0, 0}},
		{"CrossEntropy empty batch", []values{{[]int{0, 3}, nil}, {[]int{0}, nil}}, ce, []int{0}, nil},

		{"CrossEntropyOneHot", []values{logits, {[]int{2, 3}, []float64{0, 0, 1, 1, 0, 0}}}, ceOneHot,
			[]int{2}, []float64{logS, math.Log(3)}},
		// row 0: 0.5(3+logS-1) + 0.5(3+logS-2) = 1.5 + logS; row 1: log 3 (targets sum to 1)
		{"CrossEntropyOneHot probabilities", []values{logits, {[]int{2, 3}, []float64{0.5, 0.5, 0, 0.25, 0.25, 0.5}}},
			ceOneHot, []int{2}, []float64{1.5 + logS, math.Log(3)}},
		// an unnormalised target scales the loss: 2(3+logS-3)
		{"CrossEntropyOneHot scaled", []values{logits, {[]int{2, 3}, []float64{0, 0, 2, 0, 0, 0}}},
			ceOneHot, []int{2}, []float64{2 * logS, 0}},
		// a -Inf logit with a zero target adds nothing (no 0*Inf NaN)
		{"CrossEntropyOneHot -Inf logit", []values{{[]int{1, 2}, []float64{math.Inf(-1), 0}}, {[]int{1, 2}, []float64{0, 1}}},
			ceOneHot, []int{1}, []float64{0}},
		{"CrossEntropyOneHot large", []values{{[]int{1, 2}, []float64{1000, 0}}, {[]int{1, 2}, []float64{0, 1}}},
			ceOneHot, []int{1}, []float64{1000}},
		{"CrossEntropyOneHot no classes", []values{{[]int{2, 0}, nil}, {[]int{2, 0}, nil}}, ceOneHot, []int{2}, []float64{0, 0}},
		{"CrossEntropyOneHot empty batch", []values{{[]int{0, 3}, nil}, {[]int{0, 3}, nil}}, ceOneHot, []int{0}, nil},
	})
}

func TestOneHotForward(t *testing.T) {
	oneHot := func(classes int) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return OneHot(xs[0], classes, xs[0].DType()) }
	}
	runForward(t, []forwardCase{
		{"OneHot", []values{{[]int{3}, []float64{2, 0, 1}}}, oneHot(3), []int{3, 3}, []float64{0, 0, 1, 1, 0, 0, 0, 1, 0}},
		{"OneHot repeated labels", []values{{[]int{2}, []float64{1, 1}}}, oneHot(4), []int{2, 4}, []float64{0, 1, 0, 0, 0, 1, 0, 0}},
		{"OneHot scalar", []values{{nil, []float64{1}}}, oneHot(2), []int{2}, []float64{0, 1}},
		{"OneHot matrix", []values{{[]int{2, 1}, []float64{0, 1}}}, oneHot(2), []int{2, 1, 2}, []float64{1, 0, 0, 1}},
		{"OneHot one class", []values{{[]int{2}, []float64{0, 0}}}, oneHot(1), []int{2, 1}, []float64{1, 1}},
		{"OneHot empty", []values{{[]int{0}, nil}}, oneHot(4), []int{0, 4}, nil},
	})
}

// forwardErr evaluates n's inputs and returns the error of n's own Forward.
func forwardErr(t *testing.T, n *graph.Node) error {
	t.Helper()
	in := make([]*tensor.Dense, len(n.Inputs()))
	for i, x := range n.Inputs() {
		in[i] = eval(t, x, nil)
	}
	return n.Op().Forward(graph.NewDenseOf(n.Type()), in)
}

func TestLabelErrors(t *testing.T) {
	cases := []struct {
		name   string
		labels []float64
		want   string
	}{
		{"too large", []float64{0, 3}, "label 3 at index 1 is not a class index in [0,3)"},
		{"negative", []float64{-1, 0}, "label -1 at index 0 is not a class index in [0,3)"},
		{"fractional", []float64{0, 1.5}, "label 1.5 at index 1 is not a class index in [0,3)"},
		{"NaN", []float64{math.NaN(), 0}, "label NaN at index 0 is not a class index in [0,3)"},
		{"Inf", []float64{0, math.Inf(1)}, "label +Inf at index 1 is not a class index in [0,3)"},
	}
	for _, dt := range dtypes {
		for _, c := range cases {
			g := graph.New()
			labels := g.Const(dense(t, dt, []int{2}, c.labels...))
			logits := g.Const(dense(t, dt, []int{2, 3}, 1, 2, 3, 4, 5, 6))
			// The op itself: the builder refuses constant labels out of range
			// (TestCrossEntropyChecksConstantLabels); fed ones reach the kernel.
			ce := graph.Apply(crossEntropyOp{}, logits, labels)
			for _, n := range []*graph.Node{ce, OneHot(labels, 3, logits.DType())} {
				err := forwardErr(t, n)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("case %v/%s/%s: got error %v, want %q", dt, n.OpName(), c.name, err, c.want)
				}
			}
		}
	}
}

func TestNNBuildErrors(t *testing.T) {
	m23 := func(g *graph.Graph) *graph.Node { return const64(t, g, []int{2, 3}, 1, 2, 3, 4, 5, 6) }
	vec := func(g *graph.Graph, n int) *graph.Node { return const64(t, g, []int{n}, make([]float64, n)...) }
	runErrors(t, []errorCase{
		{"Softmax axis", func(g *graph.Graph) *graph.Node { return Softmax(m23(g), 2) },
			"Softmax", []string{"axis 2 out of range for rank 2", "float64(2,3)"}},
		{"LogSoftmax negative axis", func(g *graph.Graph) *graph.Node { return LogSoftmax(m23(g), -3) },
			"LogSoftmax", []string{"axis -3 out of range for rank 2", "float64(2,3)"}},
		{"Softmax of scalar", func(g *graph.Graph) *graph.Node { return Softmax(g.Scalar(1, graph.Float64), 0) },
			"Softmax", []string{"axis 0 out of range for rank 0", "float64()"}},
		{"CrossEntropy label count", func(g *graph.Graph) *graph.Node { return CrossEntropy(m23(g), vec(g, 3)) },
			"CrossEntropy", []string{"labels must be (2) for logits (2,3), got (3)"}},
		{"CrossEntropy label rank", func(g *graph.Graph) *graph.Node {
			return CrossEntropy(m23(g), const64(t, g, []int{2, 1}, 0, 1))
		}, "CrossEntropy", []string{"labels must be (2) for logits (2,3), got (2,1)"}},
		{"CrossEntropy one-hot labels", func(g *graph.Graph) *graph.Node { return CrossEntropy(m23(g), m23(g)) },
			"CrossEntropy", []string{"labels must be (2) for logits (2,3), got (2,3)"}},
		{"CrossEntropy logits rank", func(g *graph.Graph) *graph.Node { return CrossEntropy(vec(g, 3), vec(g, 3)) },
			"CrossEntropy", []string{"logits must be (N,C), got (3)"}},
		{"CrossEntropy no classes", func(g *graph.Graph) *graph.Node {
			return CrossEntropy(const64(t, g, []int{2, 0}), vec(g, 2))
		}, "CrossEntropy", []string{"logits (2,0) have no classes"}},
		{"CrossEntropy dtypes", func(g *graph.Graph) *graph.Node {
			return CrossEntropy(m23(g), g.Const(dense(t, graph.Float32, []int{2}, 0, 1)))
		}, "CrossEntropy", []string{"dtypes differ", "float64(2,3) and float32(2)"}},
		{"CrossEntropy nil labels", func(g *graph.Graph) *graph.Node { return CrossEntropy(m23(g), nil) },
			"CrossEntropy", []string{"input 1 is nil"}},
		{"CrossEntropyOneHot target shape", func(g *graph.Graph) *graph.Node {
			return CrossEntropyOneHot(m23(g), const64(t, g, []int{2, 2}, 1, 0, 0, 1))
		}, "CrossEntropyOneHot", []string{"target must have the logits' shape (2,3), got (2,2)"}},
		{"CrossEntropyOneHot class labels", func(g *graph.Graph) *graph.Node { return CrossEntropyOneHot(m23(g), vec(g, 2)) },
			"CrossEntropyOneHot", []string{"got (2)"}},
		{"OneHot classes", func(g *graph.Graph) *graph.Node { return OneHot(vec(g, 3), 0, graph.Float64) },
			"OneHot", []string{"classes must be at least 1, got 0", "float64(3)"}},
	})
}

var nnAllocCases = []allocsCase{
	{"Softmax 1", func(x *graph.Node) *graph.Node { return Softmax(x, 1) }},
	{"Softmax 0", func(x *graph.Node) *graph.Node { return Softmax(x, 0) }},
	{"LogSoftmax -1", func(x *graph.Node) *graph.Node { return LogSoftmax(x, -1) }},
	{"CrossEntropy", func(x *graph.Node) *graph.Node { return CrossEntropy(x, labelsFor(x)) }},
	{"CrossEntropyOneHot", func(x *graph.Node) *graph.Node { return CrossEntropyOneHot(x, OneHot(labelsFor(x), 32, x.DType())) }},
	{"OneHot", func(x *graph.Node) *graph.Node { return OneHot(labelsFor(x), 32, x.DType()) }},
}

// labelsFor returns class labels i%32 for the 64 rows of x, in x's dtype.
func labelsFor(x *graph.Node) *graph.Node {
	vals := make([]float64, 64)
	for i := range vals {
		vals[i] = float64(i % 32)
	}
	labels, err := graph.FromFloat64s(x.DType(), vals, 64)
	if err != nil {
		panic(err)
	}
	return x.Graph().Const(labels)
}

func TestNNForwardAllocs(t *testing.T) { checkForwardAllocs(t, nnAllocCases) }

func BenchmarkNNForward(b *testing.B) { benchmarkForward(b, nnAllocCases) }

func TestNNBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	m34 := values{[]int{3, 4}, randomVals(rng, 12)}
	t234 := values{[]int{2, 3, 4}, randomVals(rng, 24)}
	softmaxAt := func(axis int, log bool) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return softmax(xs[0], axis, log) }
	}
	crossEntropy := func(xs ...*graph.Node) *graph.Node { return CrossEntropy(xs[0], xs[1]) }
	crossEntropyOneHot := func(xs ...*graph.Node) *graph.Node { return CrossEntropyOneHot(xs[0], xs[1]) }
	labels3 := values{[]int{3}, []float64{0, 3, 1}}
	// rows of positive weights summing to 1
	probs := []float64{0.1, 0.2, 0.3, 0.4, 0.25, 0.25, 0.25, 0.25, 0.7, 0, 0.3, 0}
	for _, c := range []fdCase{
		{name: "Softmax 1", in: []values{m34}, build: softmaxAt(1, false)},
		{name: "Softmax 0", in: []values{m34}, build: softmaxAt(0, false)},
		{name: "Softmax middle axis", in: []values{t234}, build: softmaxAt(-2, false)},
		{name: "Softmax size-1 axis", in: []values{{[]int{3, 1}, []float64{1, 2, 3}}}, build: softmaxAt(1, false)},
		{name: "Softmax large", in: []values{{[]int{1, 3}, []float64{1000, 1001, 999}}}, build: softmaxAt(1, false)},
		{name: "LogSoftmax 1", in: []values{m34}, build: softmaxAt(1, true)},
		{name: "LogSoftmax 0", in: []values{m34}, build: softmaxAt(0, true)},
		{name: "LogSoftmax middle axis", in: []values{t234}, build: softmaxAt(1, true)},
		{name: "LogSoftmax needs no gradient", in: []values{m34}, build: softmaxAt(1, true), skip: []int{0}},

		{name: "CrossEntropy", in: []values{m34, labels3}, build: crossEntropy, noGrad: []int{1}},
		{name: "CrossEntropy large", in: []values{{[]int{2, 3}, []float64{1000, 1001, 999, -1000, 0, 2}}, {[]int{2}, []float64{2, 0}}},
			build: crossEntropy, noGrad: []int{1}},
		{name: "CrossEntropy one class", in: []values{{[]int{2, 1}, []float64{3, -1}}, {[]int{2}, []float64{0, 0}}},
			build: crossEntropy, noGrad: []int{1}},
		{name: "CrossEntropy needs no gradient", in: []values{m34, labels3}, build: crossEntropy, noGrad: []int{1}, skip: []int{0}},
		{name: "CrossEntropyOneHot one-hot", in: []values{m34, {[]int{3, 4}, []float64{1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0}}},
			build: crossEntropyOneHot},
		{name: "CrossEntropyOneHot probabilities", in: []values{m34, {[]int{3, 4}, probs}}, build: crossEntropyOneHot},
		{name: "CrossEntropyOneHot large", in: []values{{[]int{1, 3}, []float64{1000, 1001, 999}}, {[]int{1, 3}, []float64{0.2, 0.3, 0.5}}},
			build: crossEntropyOneHot},
		{name: "CrossEntropyOneHot logits only", in: []values{m34, {[]int{3, 4}, probs}}, build: crossEntropyOneHot, skip: []int{1}},
		{name: "CrossEntropyOneHot target only", in: []values{m34, {[]int{3, 4}, probs}}, build: crossEntropyOneHot, skip: []int{0}},
		{name: "OneHot", in: []values{labels3}, build: func(xs ...*graph.Node) *graph.Node { return OneHot(xs[0], 4, xs[0].DType()) }, noGrad: []int{0}},
	} {
		t.Run(c.name, func(t *testing.T) { checkBackwardFD(t, c) })
	}
}

// A constant label out of range is reported by CrossEntropy where it is
// built, not by its gradient's one-hot encoding when compiling.
func TestCrossEntropyChecksConstantLabels(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	CrossEntropy(x, g.Const(dense(t, graph.Float64, []int{2}, 1, 7)))
	err := g.Err()
	if err == nil || !containsAll(err.Error(), "CrossEntropy", "label 7 at index 1 is not a class index in [0,3)", "nnops_test.go") {
		t.Fatalf("got %v", err)
	}
}

// TestSoftmaxRowsBitIdentical checks that softmax along contiguous rows,
// which exponentiates several rows at once and takes each row's maximum
// with four running maxima, gives the bits of the row-at-a-time kernel
// (expSum, then a division per element) for row lengths that do and do
// not divide the block, in both dtypes, with -Inf, +Inf and NaN in every
// lane and rows whose maximum is +0 or -0 (either may be found first).
func TestSoftmaxRowsBitIdentical(t *testing.T) {
	t.Run("float32", func(t *testing.T) { checkSoftmaxRowsBits[float32](t) })
	t.Run("float64", func(t *testing.T) { checkSoftmaxRowsBits[float64](t) })
}

func checkSoftmaxRowsBits[T float](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	negZero := T(math.Copysign(0, -1))
	specials := []T{T(math.Inf(-1)), T(math.Inf(1)), T(math.NaN()), 0, negZero}
	for _, n := range []int{1, 3, 5, 16, 17, 100, softmaxBlock} {
		rows := 2*softmaxBlock/n + 3
		x := make([]T, rows*n)
		for i := range x {
			x[i] = T(r.NormFloat64() * 10)
		}
		for o := range min(rows, 40) { // a special in each lane of a row
			x[o*n+o%n] = specials[o%len(specials)]
		}
		for o := 40; o < min(rows, 48); o++ { // maxima ±0, in either order
			row := x[o*n : (o+1)*n]
			for k := range row {
				row[k] = -T(math.Abs(float64(row[k])))
			}
			row[o%n], row[(o+1)%n] = negZero, 0
			if o%2 == 0 {
				row[o%n], row[(o+1)%n] = 0, negZero
			}
		}
		x[len(x)-1] = T(math.NaN())
		got := make([]T, len(x))
		softmaxKernel(got, x, rows, n, 1, false)
		want := make([]T, len(x))
		for o := range rows {
			_, s := expSum(want, x, o*n, n, 1)
			for k := range n {
				want[o*n+k] /= T(s)
			}
		}
		for i := range got {
			if !sameFloatBits(got[i], want[i]) {
				t.Fatalf("n=%d: element %d is %v, want %v", n, i, got[i], want[i])
			}
		}
	}
}

// sameFloatBits reports whether a and b are the same bits (any NaN
// matching any).
func sameFloatBits[T float](a, b T) bool {
	return math.Float64bits(float64(a)) == math.Float64bits(float64(b)) || a != a && b != b
}

// BenchmarkSoftmaxRows is attention's softmax: 4096 rows of 16, float32.
func BenchmarkSoftmaxRows(b *testing.B) {
	x := make([]float32, 4096*16)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)))
	}
	out := make([]float32, len(x))
	for range b.N {
		softmaxKernel(out, x, 4096, 16, 1, false)
	}
}
