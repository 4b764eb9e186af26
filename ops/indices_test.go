package ops

import (
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// intDTypes are the integer dtypes indices and labels may have.
var intDTypes = []tensor.Dtype{graph.Int32, graph.Int64}

// sameValues fails unless a and b have one dtype, shape and bits.
func sameValues(t *testing.T, name string, a, b *tensor.Dense) {
	t.Helper()
	if a.Dtype() != b.Dtype() || !graph.TypeOf(a.Dtype(), a.Shape()...).Equal(graph.TypeOf(b.Dtype(), b.Shape()...)) {
		t.Fatalf("case %v: got %v%v, want %v%v", name, a.Dtype(), a.Shape(), b.Dtype(), b.Shape())
	}
	x, y := graph.Float64s(a), graph.Float64s(b)
	for i := range x {
		if x[i] != y[i] {
			t.Errorf("case %v: element %d: got %v, want %v", name, i, x[i], y[i])
		}
	}
}

// TestIntegerIndicesMatchFloatIndices runs each indexing op with integer
// indices and with the same indices held as floats: the results must be
// the same bits.
func TestIntegerIndicesMatchFloatIndices(t *testing.T) {
	table := []float64{1, -2, 3.5, 4, -5, 6, 7, 8.25}
	idx := []float64{3, 0, 3, 1, 2, 2}
	logits := []float64{0.5, -1, 2, 0.25, 3, -2, 1, 1, -0.5, 0, 0.75, 4}
	labels := []float64{2, 0, 3}
	for _, dt := range dtypes {
		for _, it := range intDTypes {
			name := dt.String() + "/" + it.String()
			g := graph.New()
			tab := g.Const(dense(t, dt, []int{4, 2}, table...))
			fi, ii := g.Const(dense(t, dt, []int{2, 3}, idx...)), g.Const(dense(t, it, []int{2, 3}, idx...))
			upd := g.Const(dense(t, dt, []int{2, 3, 1}, table[:6]...))
			lg := g.Const(dense(t, dt, []int{3, 4}, logits...))
			fl, il := g.Const(dense(t, dt, []int{3}, labels...)), g.Const(dense(t, it, []int{3}, labels...))
			pairs := []struct {
				op        string
				ints, fls *graph.Node
			}{
				{"Gather", Gather(tab, ii), Gather(tab, fi)},
				{"ScatterAdd", ScatterAdd(upd, ii, 5), ScatterAdd(upd, fi, 5)},
				{"CrossEntropy", CrossEntropy(lg, il), CrossEntropy(lg, fl)},
				{"OneHot", OneHot(il, 4, dt), OneHot(fl, 4, dt)},
			}
			for _, p := range pairs {
				sameValues(t, name+" "+p.op, eval(t, p.ints, nil), eval(t, p.fls, nil))
			}
			// An independent reference for Gather: row idx[k] of the table.
			got := eval(t, pairs[0].ints, nil)
			for k, r := range idx {
				for j := range 2 {
					if w := graph.Float(dense(t, dt, []int{8}, table...), int(r)*2+j); graph.Float(got, k*2+j) != w {
						t.Errorf("case %v Gather: element (%d,%d): got %v, want %v", name, k, j, graph.Float(got, k*2+j), w)
					}
				}
			}
		}
	}
}

func TestIntegerIndexRunErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func(g *graph.Graph, idx *graph.Node) *graph.Node
		shape []int
		vals  []float64
		want  string
	}{
		{"Gather too large", func(g *graph.Graph, idx *graph.Node) *graph.Node {
			return Gather(const64(t, g, []int{4, 1}, 1, 2, 3, 4), idx)
		}, []int{2, 2}, []float64{0, 3, 4, 1}, "index 4 at position (1,0) of the indices is not a row index in [0,4)"},
		{"ScatterAdd negative", func(g *graph.Graph, idx *graph.Node) *graph.Node {
			return ScatterAdd(const64(t, g, []int{2}, 1, 2), idx, 3)
		}, []int{2}, []float64{1, -1}, "index -1 at position (1) of the indices is not a row index in [0,3)"},
		{"CrossEntropy label", func(g *graph.Graph, idx *graph.Node) *graph.Node {
			return graph.Apply(crossEntropyOp{}, const64(t, g, []int{2, 3}, 1, 2, 3, 4, 5, 6), idx) // the kernel's check
		}, []int{2}, []float64{0, 3}, "label 3 at index 1 is not a class index in [0,3)"},
		{"OneHot label", func(g *graph.Graph, idx *graph.Node) *graph.Node { return OneHot(idx, 2, graph.Float32) },
			[]int{3}, []float64{1, 0, -7}, "label -7 at index 2 is not a class index in [0,2)"},
	}
	for _, c := range cases {
		for _, it := range intDTypes {
			g := graph.New()
			y := c.build(g, g.Const(dense(t, it, c.shape, c.vals...)))
			if err := g.Err(); err != nil {
				t.Fatalf("case %v %v: %v", c.name, it, err)
			}
			in := make([]*tensor.Dense, len(y.Inputs()))
			for i, x := range y.Inputs() {
				in[i] = x.Value()
			}
			err := y.Op().Forward(graph.NewDenseOf(y.Type()), in)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("case %v %v: got %v, want %q", c.name, it, err, c.want)
			}
		}
	}
}

func TestIntegerDTypeBuildErrors(t *testing.T) {
	i64 := func(g *graph.Graph, shape ...int) *graph.Node { return g.Input("i", graph.Int64, shape...) }
	f64 := func(g *graph.Graph, shape ...int) *graph.Node { return g.Input("f", graph.Float64, shape...) }
	f32 := func(g *graph.Graph, shape ...int) *graph.Node { return g.Input("h", graph.Float32, shape...) }
	runErrors(t, []errorCase{
		{"Add mixes float and integer", func(g *graph.Graph) *graph.Node { return Add(f64(g, 2), i64(g, 2)) },
			"Add", []string{"dtypes differ: float64(2) and int64(2): convert one with ops.Cast"}},
		{"Mul mixes floats", func(g *graph.Graph) *graph.Node { return Mul(f32(g, 2), f64(g, 2)) },
			"Mul", []string{"dtypes differ: float32(2) and float64(2): convert one with ops.Cast"}},
		{"Add of integers", func(g *graph.Graph) *graph.Node { return Add(i64(g, 2), i64(g, 2)) },
			"Add", []string{"int64(2) is not supported: the op computes on float32 or float64 (convert with ops.Cast)"}},
		{"Exp of an integer", func(g *graph.Graph) *graph.Node { return Exp(i64(g, 3)) },
			"Exp", []string{"int64(3) is not supported", "ops.Cast"}},
		{"MatMul of an integer", func(g *graph.Graph) *graph.Node { return MatMul(f64(g, 2, 2), i64(g, 2, 2)) },
			"MatMul", []string{"dtypes differ: float64(2,2) and int64(2,2)", "ops.Cast"}},
		{"Gather integer table", func(g *graph.Graph) *graph.Node { return Gather(i64(g, 3, 2), i64(g, 2)) },
			"Gather", []string{"int64(3,2) is not supported", "ops.Cast"}},
		{"Gather float indices of another dtype", func(g *graph.Graph) *graph.Node { return Gather(f64(g, 3, 2), f32(g, 2)) },
			"Gather", []string{"dtypes differ: float64(3,2) and float32(2)", "(or give int32 or int64 indices)"}},
		{"CrossEntropy integer logits", func(g *graph.Graph) *graph.Node { return CrossEntropy(i64(g, 2, 3), i64(g, 2)) },
			"CrossEntropy", []string{"int64(2,3) is not supported", "ops.Cast"}},
		{"CrossEntropy float labels of another dtype", func(g *graph.Graph) *graph.Node { return CrossEntropy(f32(g, 2, 3), f64(g, 2)) },
			"CrossEntropy", []string{"dtypes differ: float32(2,3) and float64(2)", "(or give int32 or int64 labels)"}},
		{"OneHot integer rows", func(g *graph.Graph) *graph.Node { return OneHot(i64(g, 2), 3, graph.Int64) },
			"OneHot", []string{"the rows' dtype must be float32 or float64, got int64"}},
	})
}

func TestIntegerIndicesGetNoGradient(t *testing.T) {
	g := graph.New()
	tab, idx := g.Input("table", graph.Float64, 3, 2), g.Input("idx", graph.Int64, 2)
	logits, labels := g.Input("logits", graph.Float64, 2, 3), g.Input("labels", graph.Int32, 2)
	for _, y := range []*graph.Node{Gather(tab, idx), ScatterAdd(Gather(tab, idx), idx, 3), CrossEntropy(logits, labels), OneHot(labels, 3, graph.Float64)} {
		d := y.Op().(graph.Differentiable)
		needs := make([]bool, len(y.Inputs()))
		for i := range needs {
			needs[i] = true
		}
		grads := d.Backward(graph.NewGradContext(y, needs), g.Input("g", y.DType(), y.Shape()...))
		last := grads[len(grads)-1]
		if last != nil {
			t.Errorf("case %v: the integer input got gradient %v, want none", y.OpName(), last)
		}
		if len(grads) == 2 && (grads[0] == nil || grads[0].DType() != graph.Float64) {
			t.Errorf("case %v: the float input got gradient %v, want a float64 one", y.OpName(), grads[0])
		}
	}
}
