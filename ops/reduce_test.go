package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/race"
)

// const64 adds a float64 constant of the given shape and values.
func const64(t testing.TB, g *graph.Graph, shape []int, vals ...float64) *graph.Node {
	t.Helper()
	return g.Const(dense(t, graph.Float64, shape, vals...))
}

// repeated returns n copies of v.
func repeated(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestReduceForward(t *testing.T) {
	m23 := values{[]int{2, 3}, []float64{1, 2, 3, 4, 5, 6}} // [[1 2 3] [4 5 6]]
	// t232[i][j][k] = 6i + 2j + k
	t232 := arange(2, 3, 2)
	scalar := values{nil, []float64{2.5}}
	row := values{[]int{1, 3}, []float64{1, 2, 3}}
	col := values{[]int{3, 1}, []float64{1, 2, 3}}
	empty03 := values{[]int{0, 3}, nil}
	empty20 := values{[]int{2, 0}, nil}
	lse3 := math.Log(1 + math.Exp(-1) + math.Exp(-2)) // log(e^a+e^(a-1)+e^(a-2)) - a
	lse232 := math.Log(1 + math.E + math.Exp(6) + math.Exp(7))

	one := func(f func(*graph.Node, ...int) *graph.Node, axes ...int) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return f(xs[0], axes...) }
	}
	runForward(t, []forwardCase{
		// 1+2+3+4+5+6 = 21
		{"Sum all", []values{m23}, one(Sum), nil, []float64{21}},
		{"Sum 0,1", []values{m23}, one(Sum, 0, 1), nil, []float64{21}},
		{"Sum 1,0 keep", []values{m23}, one(SumKeepDims, 1, 0), []int{1, 1}, []float64{21}},
		{"Sum all keep", []values{m23}, one(SumKeepDims), []int{1, 1}, []float64{21}},
		// columns: 1+4, 2+5, 3+6
		{"Sum 0", []values{m23}, one(Sum, 0), []int{3}, []float64{5, 7, 9}},
		{"Sum 0 keep", []values{m23}, one(SumKeepDims, 0), []int{1, 3}, []float64{5, 7, 9}},
		// rows: 1+2+3, 4+5+6
		{"Sum 1", []values{m23}, one(Sum, 1), []int{2}, []float64{6, 15}},
		{"Sum -1", []values{m23}, one(Sum, -1), []int{2}, []float64{6, 15}},
		{"Sum -1 keep", []values{m23}, one(SumKeepDims, -1), []int{2, 1}, []float64{6, 15}},
		// j: (2j)+(2j+1)+(6+2j)+(7+2j) = 14+8j
		{"Sum 0,2", []values{t232}, one(Sum, 0, 2), []int{3}, []float64{14, 22, 30}},
		{"Sum 2,0 keep", []values{t232}, one(SumKeepDims, 2, 0), []int{1, 3, 1}, []float64{14, 22, 30}},
		// (i,k): sum over j of 6i+2j+k = 18i+3k+6
		{"Sum 1 of 3-D", []values{t232}, one(Sum, 1), []int{2, 2}, []float64{6, 9, 24, 27}},

		{"Mean all", []values{m23}, one(Mean), nil, []float64{3.5}},                                          // 21/6
		{"Mean 0", []values{m23}, one(Mean, 0), []int{3}, []float64{2.5, 3.5, 4.5}},                          // (1+4)/2, ...
		{"Mean -1 keep", []values{m23}, one(MeanKeepDims, -1), []int{2, 1}, []float64{2, 5}},                 // 6/3, 15/3
		{"Mean 1 of 3-D", []values{t232}, one(Mean, 1), []int{2, 2}, []float64{2, 3, 8, 9}},                  // 6i+k+2
		{"Mean 0,2 keep", []values{t232}, one(MeanKeepDims, 0, 2), []int{1, 3, 1}, []float64{3.5, 5.5, 7.5}}, // (14+8j)/4

		{"Max all", []values{m23}, one(Max), nil, []float64{6}},
		{"Max 0", []values{m23}, one(Max, 0), []int{3}, []float64{4, 5, 6}},
		{"Max 1 keep", []values{m23}, one(MaxKeepDims, 1), []int{2, 1}, []float64{3, 6}},
		{"Max 0,2", []values{t232}, one(Max, 0, 2), []int{3}, []float64{7, 9, 11}},     // 6+2j+1
		{"Max -2", []values{t232}, one(Max, -2), []int{2, 2}, []float64{4, 5, 10, 11}}, // 6i+4+k
		{"Max negatives", []values{{[]int{2, 2}, []float64{-3, -1, -2, -5}}}, one(Max, 1), []int{2}, []float64{-1, -2}},
		{"Max NaN", []values{{[]int{2, 3}, []float64{1, math.NaN(), 3, math.NaN(), 1, 2}}}, one(Max, 1), []int{2}, []float64{math.NaN(), math.NaN()}},

		// log(e^1+e^2+e^3) = 3 + log(1+e^-1+e^-2), and likewise with 6
		{"LogSumExp 1", []values{m23}, one(LogSumExp, 1), []int{2}, []float64{3 + lse3, 6 + lse3}},
		{"LogSumExp -1 keep", []values{m23}, one(LogSumExpKeepDims, -1), []int{2, 1}, []float64{3 + lse3, 6 + lse3}},
		// log(e^1+e^4) = 4 + log(1+e^-3)
		{"LogSumExp 0", []values{m23}, one(LogSumExp, 0), []int{3},
			[]float64{4 + math.Log1p(math.Exp(-3)), 5 + math.Log1p(math.Exp(-3)), 6 + math.Log1p(math.Exp(-3))}},
		// log(e^1+...+e^6) = 6 + log(1+e^-1+...+e^-5)
		{"LogSumExp all", []values{m23}, one(LogSumExp), nil,
			[]float64{6 + math.Log(1+math.Exp(-1)+math.Exp(-2)+math.Exp(-3)+math.Exp(-4)+math.Exp(-5))}},
		// j: log(e^2j + e^(2j+1) + e^(2j+6) + e^(2j+7)) = 2j + log(1+e+e^6+e^7)
		{"LogSumExp 0,2", []values{t232}, one(LogSumExp, 0, 2), []int{3}, []float64{lse232, 2 + lse232, 4 + lse232}},
		// log(2 e^1000) = 1000 + log 2: no overflow
		{"LogSumExp large", []values{{[]int{2}, []float64{1000, 1000}}}, one(LogSumExp), nil, []float64{1000 + math.Ln2}},
		{"LogSumExp -large", []values{{[]int{2}, []float64{-1000, -1000}}}, one(LogSumExp), nil, []float64{-1000 + math.Ln2}},

		// Scalars: every reduction over no axes is the identity.
		{"Sum scalar", []values{scalar}, one(Sum), nil, []float64{2.5}},
		{"Sum scalar keep", []values{scalar}, one(SumKeepDims), nil, []float64{2.5}},
		{"Mean scalar", []values{scalar}, one(Mean), nil, []float64{2.5}},
		{"Max scalar", []values{scalar}, one(Max), nil, []float64{2.5}},
		{"LogSumExp scalar", []values{scalar}, one(LogSumExp), nil, []float64{2.5}},

		// Size-1 dimensions.
		{"Sum size-1 axis", []values{row}, one(Sum, 0), []int{3}, []float64{1, 2, 3}},
		{"Max size-1 axis", []values{row}, one(Max, 0), []int{3}, []float64{1, 2, 3}},
		{"LogSumExp size-1 axis", []values{row}, one(LogSumExp, 0), []int{3}, []float64{1, 2, 3}},
		{"Sum column", []values{col}, one(Sum, 0), []int{1}, []float64{6}},
		{"Mean column kept axis", []values{col}, one(Mean, 1), []int{3}, []float64{1, 2, 3}},
		{"LogSumExp column", []values{col}, one(LogSumExpKeepDims, 0), []int{1, 1}, []float64{3 + lse3}},

		// Zero-size dimensions: empty sums are 0, empty log-sum-exps -Inf.
		{"Sum empty axis", []values{empty03}, one(Sum, 0), []int{3}, []float64{0, 0, 0}},
		{"Sum empty all", []values{empty03}, one(Sum), nil, []float64{0}},
		{"Sum empty last axis", []values{empty20}, one(SumKeepDims, 1), []int{2, 1}, []float64{0, 0}},
		{"Sum to empty", []values{empty03}, one(Sum, 1), []int{0}, nil},
		{"Max to empty", []values{empty03}, one(Max, 1), []int{0}, nil},
		{"Mean to empty", []values{empty03}, one(MeanKeepDims, 1), []int{0, 1}, nil},
		{"LogSumExp empty axis", []values{empty03}, one(LogSumExp, 0), []int{3}, repeated(3, math.Inf(-1))},
	})
}

// TestReduceInfinities checks exactly what assertValues cannot (its
// relative tolerance accepts anything against an infinite value).
func TestReduceInfinities(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name  string
		vals  []float64
		build func(*graph.Node, ...int) *graph.Node
		want  float64
	}{
		{"LogSumExp of -Inf", []float64{math.Inf(-1), math.Inf(-1)}, LogSumExp, math.Inf(-1)},
		{"LogSumExp with -Inf", []float64{math.Inf(-1), 0}, LogSumExp, 0},
		{"LogSumExp with +Inf", []float64{inf, 0}, LogSumExp, inf},
		{"Max with +Inf", []float64{inf, 0}, Max, inf},
		{"Sum with +Inf", []float64{inf, 0}, Sum, inf},
	}
	for _, dt := range dtypes {
		for _, c := range cases {
			g := graph.New()
			got := graph.Float(eval(t, c.build(g.Const(dense(t, dt, []int{2}, c.vals...))), nil), 0)
			if got != c.want {
				t.Errorf("case %v/%s: got %v, want %v", dt, c.name, got, c.want)
			}
		}
	}
}

func TestReduceBuildErrors(t *testing.T) {
	m23 := func(g *graph.Graph) *graph.Node { return const64(t, g, []int{2, 3}, 1, 2, 3, 4, 5, 6) }
	empty03 := func(g *graph.Graph) *graph.Node { return const64(t, g, []int{0, 3}) }
	runErrors(t, []errorCase{
		{"axis too large", func(g *graph.Graph) *graph.Node { return Sum(m23(g), 2) },
			"Sum", []string{"axis 2 out of range for rank 2", "float64(2,3)"}},
		{"negative axis too small", func(g *graph.Graph) *graph.Node { return MeanKeepDims(m23(g), -3) },
			"Mean", []string{"axis -3 out of range for rank 2", "float64(2,3)"}},
		{"duplicate axis", func(g *graph.Graph) *graph.Node { return Max(m23(g), 1, 1) },
			"Max", []string{"axis 1 appears twice", "float64(2,3)"}},
		{"duplicate negative axis", func(g *graph.Graph) *graph.Node { return LogSumExp(m23(g), 0, -2) },
			"LogSumExp", []string{"axis 0 appears twice in axes [0 -2]", "float64(2,3)"}},
		{"axis of scalar", func(g *graph.Graph) *graph.Node { return SumKeepDims(g.Scalar(1, graph.Float64), 0) },
			"Sum", []string{"axis 0 out of range for rank 0", "float64()"}},
		{"max of nothing", func(g *graph.Graph) *graph.Node { return Max(empty03(g), 0) },
			"Max", []string{"maximum over axes [0] of zero elements", "float64(0,3)"}},
		{"mean of nothing", func(g *graph.Graph) *graph.Node { return Mean(empty03(g)) },
			"Mean", []string{"mean over axes [0 1] of zero elements", "float64(0,3)"}},
		{"rank above the limit", func(g *graph.Graph) *graph.Node {
			return Sum(g.Input("x", graph.Float64, 1, 1, 1, 1, 1, 1, 1, 1, 1))
		}, "Sum", []string{"rank 9 is above the supported 8", "float64(1,1,1,1,1,1,1,1,1)"}},
	})
}

// TestStickyErrors checks that after a bad build every builder of this
// family, given the poisoned node or healthy ones, returns a poisoned node
// and leaves the first error in place.
func TestStickyErrors(t *testing.T) {
	g := graph.New()
	x := const64(t, g, []int{2, 3}, 1, 2, 3, 4, 5, 6)
	labels := const64(t, g, []int{2}, 0, 1)
	bad := Sum(x, 5)
	first := g.Err()
	if first == nil {
		t.Fatal("Sum over axis 5 of a matrix: got no error")
	}
	later := map[string]*graph.Node{
		"Mean of poisoned":         Mean(bad),
		"SumKeepDims of poisoned":  SumKeepDims(bad, 0),
		"Softmax of poisoned":      Softmax(bad, 0),
		"CrossEntropy of poisoned": CrossEntropy(bad, labels),
		"OneHot of poisoned":       OneHot(bad, 3, graph.Float64),
		"Max of healthy":           Max(x, 0),
		"LogSoftmax of healthy":    LogSoftmax(x, 1),
		"CrossEntropy of healthy":  CrossEntropy(x, labels),
	}
	for name, n := range later {
		if n.Err() == nil {
			t.Errorf("case %s: got a healthy node, want a poisoned one", name)
		}
	}
	if g.Err() != first {
		t.Errorf("got error %v, want the first one %v", g.Err(), first)
	}
}

// TestReduceIdentity checks that reductions over the same axes, however
// spelled, are one op (they merge under CSE), and that others differ.
func TestReduceIdentity(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3, 4)
	key := func(n *graph.Node) any { return graph.OpKey(n.Op()) }
	if key(Sum(x, 0, -1)) != key(Sum(x, 2, 0)) {
		t.Errorf("Sum over (0,-1) and (2,0): got different ops, want equal")
	}
	if key(Sum(x)) != key(Sum(x, 0, 1, 2)) {
		t.Errorf("Sum over all axes and (0,1,2): got different ops, want equal")
	}
	for _, other := range []*graph.Node{SumKeepDims(x, 0, 2), Mean(x, 0, 2), Sum(x, 0)} {
		if key(other) == key(Sum(x, 0, 2)) {
			t.Errorf("%v and Sum over (0,2): got equal ops, want different", other)
		}
	}
}

// allocsCase is an op whose Forward must not allocate.
type allocsCase struct {
	name  string
	build func(x *graph.Node) *graph.Node
}

// forwardAllocs runs c's Forward on random (64,32) inputs of dtype dt and
// returns the allocations per run.
func forwardAllocs(t testing.TB, dt tensor.Dtype, c allocsCase, times int) (float64, func()) {
	g := graph.New()
	vals := make([]float64, 64*32)
	for i := range vals {
		vals[i] = float64(i%7) - 3
	}
	x := g.Const(dense(t, dt, []int{64, 32}, vals...))
	y := c.build(x)
	if g.Err() != nil {
		t.Fatal(g.Err())
	}
	in := make([]*tensor.Dense, len(y.Inputs()))
	for i, n := range y.Inputs() {
		in[i] = eval(t, n, nil)
	}
	out := graph.NewDenseOf(y.Type())
	run := func() {
		if err := y.Op().Forward(out, in); err != nil {
			t.Fatal(err)
		}
	}
	return testing.AllocsPerRun(times, run), run
}

var reduceAllocCases = []allocsCase{
	{"Sum 0", func(x *graph.Node) *graph.Node { return Sum(x, 0) }},
	{"Sum 1", func(x *graph.Node) *graph.Node { return Sum(x, 1) }},
	{"Mean all", func(x *graph.Node) *graph.Node { return Mean(x) }},
	{"Max 0 keep", func(x *graph.Node) *graph.Node { return MaxKeepDims(x, 0) }},
	{"LogSumExp 0", func(x *graph.Node) *graph.Node { return LogSumExp(x, 0) }},
	{"LogSumExp 1", func(x *graph.Node) *graph.Node { return LogSumExp(x, 1) }},
}

func TestReduceForwardAllocs(t *testing.T) { checkForwardAllocs(t, reduceAllocCases) }

func BenchmarkReduceForward(b *testing.B) { benchmarkForward(b, reduceAllocCases) }

// checkForwardAllocs asserts each case's Forward allocates nothing, in
// both dtypes.
func checkForwardAllocs(t *testing.T, cases []allocsCase) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop values: allocations are counted without it")
	}
	for _, dt := range dtypes {
		for _, c := range cases {
			if n, _ := forwardAllocs(t, dt, c, 20); n != 0 {
				t.Errorf("case %v/%s: got %v allocations per Forward, want 0", dt, c.name, n)
			}
		}
	}
}

// benchmarkForward times each case's Forward, in both dtypes.
func benchmarkForward(b *testing.B, cases []allocsCase) {
	for _, dt := range dtypes {
		for _, c := range cases {
			b.Run(fmt.Sprintf("%v/%s", dt, c.name), func(b *testing.B) {
				_, run := forwardAllocs(b, dt, c, 1)
				b.ReportAllocs()
				for b.Loop() {
					run()
				}
			})
		}
	}
}

func TestReduceBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	m34 := values{[]int{3, 4}, randomVals(rng, 12)}
	t234 := values{[]int{2, 3, 4}, randomVals(rng, 24)}
	// Two-way ties: central differences see half the slope of each, which
	// is the share Max's gradient gives them.
	ties := values{[]int{2, 3}, []float64{1, 3, 3, 2, 2, 0}}
	one := func(f func(*graph.Node, ...int) *graph.Node, axes ...int) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return f(xs[0], axes...) }
	}
	for _, c := range []fdCase{
		{name: "Sum all", in: []values{m34}, build: one(Sum)},
		{name: "Sum 0", in: []values{m34}, build: one(Sum, 0)},
		{name: "Sum -1 keep", in: []values{m34}, build: one(SumKeepDims, -1)},
		{name: "Sum 0,2", in: []values{t234}, build: one(Sum, 0, 2)},
		{name: "Sum 1 keep of 3-D", in: []values{t234}, build: one(SumKeepDims, 1)},
		{name: "Sum scalar", in: []values{{nil, []float64{1.5}}}, build: one(Sum)},
		{name: "Sum size-1 axis", in: []values{{[]int{1, 3}, []float64{1, 2, 3}}}, build: one(Sum, 0)},
		{name: "Sum empty axis", in: []values{{[]int{0, 3}, nil}}, build: one(Sum, 0)},
		{name: "Sum needs no gradient", in: []values{m34}, build: one(Sum, 0), skip: []int{0}},
		{name: "Mean all", in: []values{m34}, build: one(Mean)},
		{name: "Mean 1", in: []values{m34}, build: one(Mean, 1)},
		{name: "Mean 2,0 keep", in: []values{t234}, build: one(MeanKeepDims, 2, 0)},
		{name: "Mean scalar", in: []values{{nil, []float64{1.5}}}, build: one(Mean)},
		{name: "Max all", in: []values{m34}, build: one(Max)},
		{name: "Max 1", in: []values{m34}, build: one(Max, 1)},
		{name: "Max 0 keep", in: []values{m34}, build: one(MaxKeepDims, 0)},
		{name: "Max 0,2", in: []values{t234}, build: one(Max, 0, 2)},
		{name: "Max ties", in: []values{ties}, build: one(Max, 1)},
		{name: "Max ties keep", in: []values{ties}, build: one(MaxKeepDims, -1)},
		{name: "Max scalar", in: []values{{nil, []float64{1.5}}}, build: one(Max)},
		{name: "LogSumExp all", in: []values{m34}, build: one(LogSumExp)},
		{name: "LogSumExp 1", in: []values{m34}, build: one(LogSumExp, 1)},
		{name: "LogSumExp 0 keep", in: []values{m34}, build: one(LogSumExpKeepDims, 0)},
		{name: "LogSumExp 0,2", in: []values{t234}, build: one(LogSumExp, 2, 0)},
		{name: "LogSumExp large", in: []values{{[]int{3}, []float64{1000, 1001, 999}}}, build: one(LogSumExp)},
		{name: "LogSumExp scalar", in: []values{{nil, []float64{1.5}}}, build: one(LogSumExp)},
	} {
		t.Run(c.name, func(t *testing.T) { checkBackwardFD(t, c) })
	}
}
