package ops

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

func gather(xs ...*graph.Node) *graph.Node { return Gather(xs[0], xs[1]) }

func scatterAdd(rows int) func(xs ...*graph.Node) *graph.Node {
	return func(xs ...*graph.Node) *graph.Node { return ScatterAdd(xs[0], xs[1], rows) }
}

func TestGatherForward(t *testing.T) {
	t42 := arange(4, 2) // rows [0,1], [2,3], [4,5], [6,7]
	runForward(t, []forwardCase{
		{"Gather", []values{t42, of([]int{3}, 3, 0, 1)}, gather, []int{3, 2}, []float64{6, 7, 0, 1, 2, 3}},
		{"Gather repeated", []values{t42, of([]int{4}, 2, 2, 0, 2)}, gather, []int{4, 2}, []float64{4, 5, 4, 5, 0, 1, 4, 5}},
		{"Gather scalar index", []values{t42, of(nil, 2)}, gather, []int{2}, []float64{4, 5}},
		{"Gather 2-D indices", []values{t42, of([]int{2, 2}, 3, 0, 1, 1)}, gather, []int{2, 2, 2},
			[]float64{6, 7, 0, 1, 2, 3, 2, 3}},
		// row r of a (3,2,2) table holds 4r, 4r+1, 4r+2, 4r+3
		{"Gather rows of matrices", []values{arange(3, 2, 2), of([]int{2}, 2, 0)}, gather, []int{2, 2, 2},
			[]float64{8, 9, 10, 11, 0, 1, 2, 3}},
		{"Gather from a vector", []values{of([]int{3}, 10, 20, 30), of([]int{2, 2}, 2, 0, 1, 2)}, gather, []int{2, 2},
			[]float64{30, 10, 20, 30}},
		{"Gather no indices", []values{t42, of([]int{0})}, gather, []int{0, 2}, nil},
		{"Gather empty rows", []values{of([]int{3, 0}), of([]int{2}, 2, 0)}, gather, []int{2, 0}, nil},
	})
}

func TestScatterAddForward(t *testing.T) {
	u32 := of([]int{3, 2}, 1, 2, 3, 4, 5, 6)
	runForward(t, []forwardCase{
		// row 3 gets [1,2], row 0 [3,4], row 1 [5,6]; row 2 stays 0
		{"ScatterAdd", []values{u32, of([]int{3}, 3, 0, 1)}, scatterAdd(4), []int{4, 2}, []float64{3, 4, 5, 6, 0, 0, 1, 2}},
		// row 2: [1+3+7, 2+4+8]; row 0: [5,6]
		{"ScatterAdd repeated", []values{arange(4, 2).plus(1), of([]int{4}, 2, 2, 0, 2)}, scatterAdd(4), []int{4, 2},
			[]float64{5, 6, 0, 0, 11, 14, 0, 0}},
		{"ScatterAdd scalar index", []values{of([]int{2}, 1, 2), of(nil, 2)}, scatterAdd(3), []int{3, 2}, []float64{0, 0, 0, 0, 1, 2}},
		// updates rows [0,1], [2,3], [4,5], [6,7] to rows 3, 0, 3, 1:
		// row 3 is [0+4, 1+5]
		{"ScatterAdd 2-D indices", []values{arange(2, 2, 2), of([]int{2, 2}, 3, 0, 3, 1)}, scatterAdd(4), []int{4, 2},
			[]float64{2, 3, 6, 7, 0, 0, 4, 6}},
		// element 0 gets 4; element 1 gets 1+2
		{"ScatterAdd to a vector", []values{of([]int{3}, 1, 2, 4), of([]int{3}, 1, 1, 0)}, scatterAdd(2), []int{2}, []float64{4, 3}},
		{"ScatterAdd no indices", []values{of([]int{0, 2}), of([]int{0})}, scatterAdd(3), []int{3, 2}, []float64{0, 0, 0, 0, 0, 0}},
		{"ScatterAdd empty rows", []values{of([]int{2, 0}), of([]int{2}, 1, 0)}, scatterAdd(3), []int{3, 0}, nil},
	})
}

// TestScatterAddOverwrites: ScatterAdd starts from zeros whatever its
// output buffer held (the machine reuses buffers).
func TestScatterAddOverwrites(t *testing.T) {
	for _, dt := range dtypes {
		g := graph.New()
		y := ScatterAdd(g.Const(dense(t, dt, []int{2}, 1, 2)), g.Const(dense(t, dt, []int{2}, 1, 1)), 2)
		out := dense(t, dt, []int{2}, 99, 99)
		if err := y.Op().Forward(out, []*tensor.Dense{y.Inputs()[0].Value(), y.Inputs()[1].Value()}); err != nil {
			t.Fatalf("case %v: %v", dt, err)
		}
		assertValues(t, out, []int{2}, 0, 3)
	}
}

func TestGatherBuildErrors(t *testing.T) {
	vec := func(g *graph.Graph, n int) *graph.Node { return const64(t, g, []int{n}, make([]float64, n)...) }
	m32 := func(g *graph.Graph) *graph.Node { return const64(t, g, []int{3, 2}, 1, 2, 3, 4, 5, 6) }
	f32 := func(g *graph.Graph) *graph.Node { return g.Const(dense(t, graph.Float32, []int{3}, 0, 1, 2)) }
	runErrors(t, []errorCase{
		{"Gather scalar table", func(g *graph.Graph) *graph.Node { return Gather(g.Scalar(1, graph.Float64), vec(g, 2)) },
			"Gather", []string{"table must be (n,...) with n ≥ 1 rows, got ()"}},
		{"Gather empty table", func(g *graph.Graph) *graph.Node { return Gather(const64(t, g, []int{0, 2}), vec(g, 2)) },
			"Gather", []string{"table must be (n,...) with n ≥ 1 rows, got (0,2)"}},
		{"Gather dtypes", func(g *graph.Graph) *graph.Node { return Gather(m32(g), f32(g)) },
			"Gather", []string{"dtypes differ", "float64(3,2) and float32(3)"}},
		{"Gather nil indices", func(g *graph.Graph) *graph.Node { return Gather(m32(g), nil) },
			"Gather", []string{"input 1 is nil"}},
		{"ScatterAdd no rows", func(g *graph.Graph) *graph.Node { return ScatterAdd(m32(g), vec(g, 3), 0) },
			"ScatterAdd", []string{"rows must be at least 1, got 0", "float64(3,2)"}},
		{"ScatterAdd negative rows", func(g *graph.Graph) *graph.Node { return ScatterAdd(m32(g), vec(g, 3), -2) },
			"ScatterAdd", []string{"rows must be at least 1, got -2"}},
		{"ScatterAdd indices shape", func(g *graph.Graph) *graph.Node { return ScatterAdd(m32(g), vec(g, 2), 4) },
			"ScatterAdd", []string{"updates (3,2) must begin with the indices' shape (2)"}},
		{"ScatterAdd indices rank", func(g *graph.Graph) *graph.Node {
			return ScatterAdd(vec(g, 3), const64(t, g, []int{3, 1}, 0, 1, 2), 4)
		}, "ScatterAdd", []string{"updates (3) must begin with the indices' shape (3,1)"}},
		{"ScatterAdd dtypes", func(g *graph.Graph) *graph.Node { return ScatterAdd(m32(g), f32(g), 4) },
			"ScatterAdd", []string{"dtypes differ", "float64(3,2) and float32(3)"}},
		{"ScatterAdd nil updates", func(g *graph.Graph) *graph.Node { return ScatterAdd(nil, vec(g, 3), 4) },
			"ScatterAdd", []string{"input 0 is nil"}},
	})
}

// TestGatherStickyErrors: a poisoned table, updates or indices poisons the
// result and keeps the first error.
func TestGatherStickyErrors(t *testing.T) {
	g := graph.New()
	x := const64(t, g, []int{2, 3}, 1, 2, 3, 4, 5, 6)
	idx := const64(t, g, []int{2}, 0, 1)
	bad := Sum(x, 5)
	first := g.Err()
	for name, n := range map[string]*graph.Node{
		"Gather of poisoned table":       Gather(bad, idx),
		"Gather of poisoned indices":     Gather(x, bad),
		"ScatterAdd of poisoned updates": ScatterAdd(bad, idx, 3),
		"ScatterAdd of poisoned indices": ScatterAdd(x, bad, 3),
	} {
		if n.Err() == nil {
			t.Errorf("case %s: got a healthy node, want a poisoned one", name)
		}
	}
	if first == nil || g.Err() != first {
		t.Errorf("got error %v, want the first one %v", g.Err(), first)
	}
}

func TestGatherIndexErrors(t *testing.T) {
	cases := []struct {
		name    string
		shape   []int
		indices []float64
		want    string
	}{
		{"too large", []int{2, 2}, []float64{0, 3, 4, 1}, "index 4 at position (1,0) of the indices is not a row index in [0,4)"},
		{"negative", []int{2, 2}, []float64{0, -1, 2, 1}, "index -1 at position (0,1) of the indices is not a row index in [0,4)"},
		{"fractional", []int{4}, []float64{0, 1, 2, 2.5}, "index 2.5 at position (3) of the indices is not a row index in [0,4)"},
		{"NaN", []int{4}, []float64{math.NaN(), 0, 0, 0}, "index NaN at position (0) of the indices is not a row index in [0,4)"},
		{"Inf", []int{2, 2}, []float64{0, 0, 0, math.Inf(1)}, "index +Inf at position (1,1) of the indices is not a row index in [0,4)"},
		{"scalar", nil, []float64{7}, "index 7 at position () of the indices is not a row index in [0,4)"},
	}
	for _, dt := range dtypes {
		for _, c := range cases {
			g := graph.New()
			indices := g.Const(dense(t, dt, c.shape, c.indices...))
			table := g.Const(dense(t, dt, []int{4, 2}, 0, 1, 2, 3, 4, 5, 6, 7))
			updates := g.Const(graph.NewDense(dt, append(append([]int(nil), c.shape...), 2)...))
			for _, n := range []*graph.Node{Gather(table, indices), ScatterAdd(updates, indices, 4)} {
				err := forwardErr(t, n)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("case %v/%s/%s: got error %v, want %q", dt, n.OpName(), c.name, err, c.want)
				}
			}
		}
	}
}

var gatherAllocCases = []allocsCase{
	{"Gather", func(x *graph.Node) *graph.Node { return Gather(x, labelsFor(x)) }},
	{"Gather 2-D indices", func(x *graph.Node) *graph.Node { return Gather(x, Reshape(labelsFor(x), 8, 8)) }},
	{"ScatterAdd", func(x *graph.Node) *graph.Node { return ScatterAdd(x, labelsFor(x), 32) }},
}

func TestGatherForwardAllocs(t *testing.T) { checkForwardAllocs(t, gatherAllocCases) }

func BenchmarkGatherForward(b *testing.B) { benchmarkForward(b, gatherAllocCases) }

func TestGatherBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	m43 := values{[]int{4, 3}, randomVals(rng, 12)}
	u32 := values{[]int{3, 2}, randomVals(rng, 6)}
	repeated := of([]int{3}, 3, 0, 3)
	for _, c := range []fdCase{
		{name: "Gather", in: []values{m43, repeated}, build: gather, noGrad: []int{1}},
		{name: "Gather 2-D indices", in: []values{m43, of([]int{2, 2}, 1, 1, 0, 2)}, build: gather, noGrad: []int{1}},
		{name: "Gather scalar index", in: []values{m43, of(nil, 2)}, build: gather, noGrad: []int{1}},
		{name: "Gather needs no gradient", in: []values{m43, repeated}, build: gather, noGrad: []int{1}, skip: []int{0}},
		{name: "ScatterAdd", in: []values{u32, repeated}, build: scatterAdd(4), noGrad: []int{1}},
		{name: "ScatterAdd 2-D indices", in: []values{{[]int{2, 2, 3}, randomVals(rng, 12)}, of([]int{2, 2}, 1, 1, 0, 2)},
			build: scatterAdd(3), noGrad: []int{1}},
		{name: "ScatterAdd needs no gradient", in: []values{u32, repeated}, build: scatterAdd(4), noGrad: []int{1}, skip: []int{0}},
	} {
		t.Run(c.name, func(t *testing.T) { checkBackwardFD(t, c) })
	}
}
