package dist

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/fdtest"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// single is the Comm of a process no launcher started.
func single() *Comm { return &Comm{size: 1, timeout: DefaultTimeout} }

// v is the pattern every rank scales by rank+1: rank r holds (r+1)·v.
var v = []float64{1, -2, 0.5, 3, -0.25, 4} // shape (2, 3)

// scaled is s·xs.
func scaled(xs []float64, s float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = s * x
	}
	return out
}

// checkCollectives runs every collective on rank r's (r+1)·v in one
// program, on a machine made with opts (on a device, say), and compares
// each with its value computed by hand for k ranks.
func checkCollectives(t *testing.T, c *Comm, opts ...vm.Option) {
	k, r := float64(c.Size()), float64(c.Rank())
	tri := k * (k + 1) / 2 // Σ (q+1) over the ranks
	maxOf := make([]float64, len(v))
	for i, x := range v {
		maxOf[i] = math.Max(x, k*x) // the largest of (q+1)·x
	}
	var gathered []float64
	for q := range c.Size() {
		gathered = append(gathered, scaled(v, float64(q+1))...)
	}
	w := make([]float64, 2*c.Size()*3) // ReduceScatter's input pattern, (2k, 3)
	for i := range w {
		w[i] = float64(i%7) - 2.5
	}
	block := w[c.Rank()*6 : (c.Rank()+1)*6]
	reduced := scaled(v, 0)
	if c.Rank() == 0 {
		reduced = scaled(v, tri)
	}
	for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
		g := graph.New()
		x := g.Input("x", dtype, 2, 3)
		wide := g.Const(fdtest.TensorOf(t, graph.TypeOf(dtype, 2*c.Size(), 3), w...))
		// ReduceScatter's input is (r+1)·w, built from x's first element,
		// which is r+1.
		first := ops.Reshape(ops.Slice(ops.Slice(x, 0, 0, 1), 1, 0, 1), 1, 1)
		cases := []struct {
			name string
			out  *graph.Node
			want []float64
		}{
			{"AllReduce(sum)", AllReduce(c, x, Sum), scaled(v, tri)},
			{"AllReduce(mean)", AllReduce(c, x, Mean), scaled(v, tri/k)},
			{"AllReduce(max)", AllReduce(c, x, Max), maxOf},
			{"Broadcast(from last)", Broadcast(c, x, c.Size()-1), scaled(v, k)},
			{"ReduceTo(0)", ReduceTo(c, x, 0), reduced},
			{"AllGather", AllGather(c, x), gathered},
			{"ReduceScatter(sum)", ReduceScatter(c, ops.Mul(wide, first), Sum), scaled(block, tri)},
			{"ReduceScatter(mean)", ReduceScatter(c, ops.Mul(wide, first), Mean), scaled(block, tri/k)},
		}
		outs := make([]*graph.Node, len(cases))
		for i, cs := range cases {
			outs[i] = cs.out
		}
		got := evaluate(t, outs, x, scaled(v, r+1), opts...)
		tol := map[tensor.Dtype]float64{graph.Float64: 1e-12, graph.Float32: 1e-6}[dtype]
		for i, cs := range cases {
			fdtest.RequireClose(t, cs.want, got[i], tol, fmt.Sprintf("%v, %v, %s", c, dtype, cs.name))
		}
	}
}

// evaluate runs outputs once, on a machine made with opts, with the
// input x fed x0, and returns their values.
func evaluate(t *testing.T, outputs []*graph.Node, x *graph.Node, x0 []float64, opts ...vm.Option) [][]float64 {
	t.Helper()
	p, err := compile.Compile(outputs, compile.WithChecks(), compile.WithFixedDraws())
	require.NoError(t, err)
	m, err := vm.New(p, opts...)
	require.NoError(t, err)
	defer m.Close()
	require.NoError(t, m.Run(vm.Feeds{x: fdtest.TensorOf(t, x.Type(), x0...)}))
	return fdtest.Values(t, m, outputs)
}

// checkGradients checks each collective's gradient, and its forward-mode
// derivative, against central differences of the ranks' total loss G = Σ_r L_r, L_r = Σ w_r·sin(f(x_r))
// with weights w_r differing by rank: for each rank p and element i, only
// rank p moves x_p[i], every rank recomputes its L_r, and the difference
// of G (summed by an all-reduce) must match rank p's symbolic gradient.
func checkGradients(t *testing.T, c *Comm) {
	k := c.Size()
	x0 := scaled(fdtest.RandomValues(uint64(c.Rank())+1, 2*k*2), 1) // (2k, 2): every collective takes it
	cases := []struct {
		name string
		f    func(x *graph.Node) *graph.Node
	}{
		{"AllReduce(sum)", func(x *graph.Node) *graph.Node { return AllReduce(c, x, Sum) }},
		{"AllReduce(mean)", func(x *graph.Node) *graph.Node { return AllReduce(c, x, Mean) }},
		{"AllReduce(max)", func(x *graph.Node) *graph.Node { return AllReduce(c, x, Max) }},
		{"Broadcast", func(x *graph.Node) *graph.Node { return Broadcast(c, x, k-1) }},
		{"ReduceTo", func(x *graph.Node) *graph.Node { return ReduceTo(c, x, 0) }},
		{"AllGather", func(x *graph.Node) *graph.Node { return AllGather(c, x) }},
		{"ReduceScatter(sum)", func(x *graph.Node) *graph.Node { return ReduceScatter(c, x, Sum) }},
		{"ReduceScatter(mean)", func(x *graph.Node) *graph.Node { return ReduceScatter(c, x, Mean) }},
	}
	total := graph.NewDense(graph.Float64)
	for _, cs := range cases {
		g := graph.New()
		x := g.Input("x", graph.Float64, 2*k, 2)
		y := cs.f(x)
		wts := g.Const(fdtest.TensorOf(t, y.Type(), scaled(fdtest.RandomValues(7, y.Type().Size()), float64(c.Rank()+2))...))
		loss := ops.Sum(ops.Mul(wts, ops.Sin(y)))
		grad, err := compile.Grad(loss, x)
		require.NoError(t, err, cs.name)
		dir := fdtest.RandomValues(uint64(11+c.Rank()), len(x0)) // this rank's tangent
		jvp, err := compile.JVP([]*graph.Node{loss}, []*graph.Node{x}, []*graph.Node{g.Const(fdtest.TensorOf(t, x.Type(), dir...))})
		require.NoError(t, err, cs.name)
		m := fdtest.Machine(t, loss, grad[0], jvp[0])
		local := 0.0 // L_r at the last run
		agreed := newAgreement()
		run := func(xs []float64) float64 {
			require.NoError(t, m.Run(vm.Feeds{x: fdtest.TensorOf(t, x.Type(), xs...)}), cs.name)
			l, err := m.Value(loss)
			require.NoError(t, err)
			local = graph.Float(l, 0)
			require.NoError(t, c.allReduce(total, l, Sum, agreed), cs.name)
			return graph.Float(total, 0)
		}
		run(x0)
		gv, err := m.Value(grad[0])
		require.NoError(t, err)
		symbolic := graph.Float64s(gv)
		jv, err := m.Value(jvp[0])
		require.NoError(t, err)
		forward := graph.Float(jv, 0)

		// Forward mode: every rank moves along its own tangent at once, and
		// the change of its own L_r is its JVP.
		const eps = 1e-6
		run(moved(x0, dir, eps))
		hi := local
		run(moved(x0, dir, -eps))
		fdtest.RequireClose(t, []float64{(hi - local) / (2 * eps)}, []float64{forward}, 1e-6, fmt.Sprintf("%v: JVP of %s", c, cs.name))
		xs := append([]float64(nil), x0...)
		for p := range k {
			numeric := make([]float64, len(x0))
			for i := range x0 {
				if c.Rank() == p {
					xs[i] = x0[i] + eps
				}
				hi := run(xs)
				if c.Rank() == p {
					xs[i] = x0[i] - eps
				}
				lo := run(xs)
				xs[i] = x0[i]
				numeric[i] = (hi - lo) / (2 * eps)
			}
			if c.Rank() == p {
				fdtest.RequireClose(t, numeric, symbolic, 1e-6, fmt.Sprintf("%v: gradient of %s", c, cs.name))
			}
		}
	}
}

func TestCollectivesSingleProcess(t *testing.T) { checkCollectives(t, single()) }

func TestGradientsSingleProcess(t *testing.T) { checkGradients(t, single()) }

// moved is x + s·d.
func moved(x, d []float64, s float64) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		out[i] = x[i] + s*d[i]
	}
	return out
}
