package ops_test

import (
	"math"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/fdtest"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

func f64(t *testing.T, vals []float64, shape ...int) *tensor.Dense {
	t.Helper()
	d, err := graph.FromFloat64s(graph.Float64, vals, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// run compiles outs, runs them once with feeds and returns their values.
func run(t testing.TB, outs []*graph.Node, feeds vm.Feeds, opts ...vm.Option) [][]float64 {
	t.Helper()
	p, err := compile.Compile(outs)
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Run(feeds); err != nil {
		t.Fatal(err)
	}
	return fdtest.Values(t, m, outs)
}

// cumsum is a running sum with a running product beside it, by hand.
func TestScanValuesByHand(t *testing.T) {
	g := graph.New()
	xs := g.Input("xs", graph.Float64, 4)
	init := g.Const(f64(t, []float64{0, 1}, 2))
	body := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		sum := ops.Add(ops.Slice(c[0], 0, 0, 1), ops.Reshape(x[0], 1))
		prod := ops.Mul(ops.Slice(c[0], 0, 1, 2), ops.Reshape(x[0], 1))
		next := ops.Concat(0, sum, prod)
		return []*graph.Node{next}, []*graph.Node{sum}
	}
	final, ys := ops.Scan(body, []*graph.Node{init}, []*graph.Node{xs})
	rfinal, rys := ops.Scan(body, []*graph.Node{init}, []*graph.Node{xs}, ops.Reverse())
	got := run(t, []*graph.Node{final[0], ys[0], rfinal[0], rys[0]}, vm.Feeds{xs: f64(t, []float64{1, 2, 3, 4}, 4)})
	want := [][]float64{{10, 24}, {1, 3, 6, 10}, {10, 24}, {10, 9, 7, 4}}
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("output %d: got %v, want %v", i, got[i], want[i])
			}
		}
	}
	if s := ys[0].Shape(); len(s) != 2 || s[0] != 4 || s[1] != 1 {
		t.Errorf("ys shape %v, want (4, 1)", s)
	}
}

// Carries that a step passes on unchanged, swaps, or computes without
// reading them, by hand: a' = b, b' = a + x, k' = k, u' = 2x, p' = q,
// q' = p, y = a + b + k + 100p, from (10, 20, 7, 0, 1, 2) over x = 1, 2,
// 3, 4. The machine keeps carries in the body's inputs from step to step;
// a new carry that is another carry's input must not be overwritten
// before it is read.
func TestScanCarriesByHand(t *testing.T) {
	g := graph.New()
	xs := g.Input("xs", graph.Float64, 4)
	var init []*graph.Node
	for _, v := range []float64{10, 20, 7, 0, 1, 2} {
		init = append(init, g.Scalar(v, graph.Float64))
	}
	body := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		y := ops.Add(ops.Add(ops.Add(c[0], c[1]), c[2]), ops.Scale(c[4], 100))
		return []*graph.Node{c[1], ops.Add(c[0], x[0]), c[2], ops.Scale(x[0], 2), c[5], c[4]}, []*graph.Node{y}
	}
	final, ys := ops.Scan(body, init, []*graph.Node{xs})
	rfinal, rys := ops.Scan(body, init, []*graph.Node{xs}, ops.Reverse())
	outs := append(append(append(final, ys[0]), rfinal...), rys[0])
	got := run(t, outs, vm.Feeds{xs: f64(t, []float64{1, 2, 3, 4}, 4)})
	// Reversed, x = 4, 3, 2, 1 at steps 3, 2, 1, 0.
	want := [][]float64{{14}, {26}, {7}, {8}, {1}, {2}, {137, 238, 140, 243}, {16}, {24}, {7}, {2}, {1}, {2}, {246, 144, 241, 137}}
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("output %d: got %v, want %v", i, got[i], want[i])
			}
		}
	}
}

// A zero-length Scan returns its initial carry and empty outputs; the
// gradient with respect to the initial carry is the final carry's, and a
// captured value gets zero.
func TestScanZeroSteps(t *testing.T) {
	g := graph.New()
	h0 := g.Param("h0", f64(t, []float64{0.5, -2}, 2))
	w := g.Param("w", f64(t, []float64{3}, 1))
	xs := g.Input("xs", graph.Float64, 0, 2)
	final, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		h := ops.Tanh(ops.Mul(ops.Add(c[0], x[0]), w))
		return []*graph.Node{h}, []*graph.Node{h}
	}, []*graph.Node{h0}, []*graph.Node{xs})
	if s := ys[0].Shape(); len(s) != 2 || s[0] != 0 || s[1] != 2 {
		t.Fatalf("ys shape %v, want (0, 2)", s)
	}
	loss := ops.Sum(ops.Square(final[0]))
	grads, err := compile.GradWith(loss, []*graph.Node{h0, w}, compile.ZerosIfDisconnected())
	if err != nil {
		t.Fatal(err)
	}
	got := run(t, []*graph.Node{final[0], grads[0], grads[1]}, vm.Feeds{xs: graph.NewDense(graph.Float64, 0, 2)})
	want := [][]float64{{0.5, -2}, {1, -4}, {0}}
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("output %d: got %v, want %v", i, got[i], want[i])
			}
		}
	}
}

// The machine runs a Scan and its gradients without allocating, on one
// thread or two, with the same results; a Scan of constants, folded by the
// compiler through the interpreter, gives the machine's values.
func TestScanRunsWithoutAllocating(t *testing.T) {
	build := func() (*graph.Graph, *graph.Node, []*graph.Node, *graph.Node) {
		g := graph.New()
		W := g.Param("W", f64(t, []float64{0.1, -0.4, 0.3, 0.2, 0.5, -0.1, 0.2, 0.3, -0.2}, 3, 3))
		h0 := g.Param("h0", f64(t, []float64{0.1, 0.2, 0.3, -0.1, 0, 0.4}, 2, 3))
		xs := g.Input("xs", graph.Float64, 20, 2, 3)
		final, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			h := ops.Tanh(ops.Add(ops.MatMul(c[0], W), x[0]))
			return []*graph.Node{h}, []*graph.Node{ops.Sum(h)}
		}, []*graph.Node{h0}, []*graph.Node{xs})
		loss := ops.Add(ops.Sum(final[0]), ops.Sum(ops.Square(ys[0])))
		grads, err := compile.Grad(loss, W, h0)
		if err != nil {
			t.Fatal(err)
		}
		return g, loss, grads, xs
	}
	xv := make([]float64, 120)
	for i := range xv {
		xv[i] = math.Sin(float64(i))
	}
	var results [][]float64
	for _, threads := range []int{1, 2} {
		_, loss, grads, xs := build()
		outs := append([]*graph.Node{loss}, grads...)
		p, err := compile.Compile(outs)
		if err != nil {
			t.Fatal(err)
		}
		m, err := vm.New(p, vm.WithThreads(threads))
		if err != nil {
			t.Fatal(err)
		}
		feeds := vm.Feeds{xs: f64(t, xv, 20, 2, 3)}
		if err := m.Run(feeds); err != nil {
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(5, func() { _ = m.Run(feeds) }); a != 0 {
			t.Errorf("%d threads: %v allocations per run, want 0", threads, a)
		}
		var vals []float64
		for _, o := range outs {
			v, _ := m.Value(o)
			vals = append(vals, graph.Float64s(v)...)
		}
		if results != nil {
			for i := range vals {
				if vals[i] != results[0][i] {
					t.Fatalf("2 threads: value %d is %v, 1 thread %v", i, vals[i], results[0][i])
				}
			}
		}
		results = append(results, vals)
	}

	// Constants only: the compiler folds the Scan, interpreting its body.
	g := graph.New()
	W := g.Const(f64(t, []float64{0.1, -0.4, 0.3, 0.2}, 2, 2))
	xs := g.Const(f64(t, []float64{0.5, 1, -1, 2, 0.25, 0}, 3, 1, 2))
	h0 := g.Const(f64(t, []float64{0.1, 0.2}, 1, 2))
	final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return []*graph.Node{ops.Tanh(ops.Add(ops.MatMul(c[0], W), x[0]))}, nil
	}, []*graph.Node{h0}, []*graph.Node{xs})
	folded, err := compile.Compile([]*graph.Node{final[0]})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(folded.Instructions()); n != 0 {
		t.Fatalf("a Scan of constants compiles to %d instructions, want 0 (folded)", n)
	}
	mf, _ := vm.New(folded)
	_ = mf.Run(nil)
	fv, _ := mf.Value(final[0])
	p, err := compile.Compile([]*graph.Node{final[0]}, compile.WithoutPass("constfold"))
	if err != nil {
		t.Fatal(err)
	}
	mr, _ := vm.New(p)
	if err := mr.Run(nil); err != nil {
		t.Fatal(err)
	}
	rv, _ := mr.Value(final[0])
	h := []float64{0.1, 0.2}
	for s := range 3 {
		x := graph.Float64s(xs.Value())[2*s:]
		h = []float64{math.Tanh(h[0]*0.1 + h[1]*0.3 + x[0]), math.Tanh(h[0]*-0.4 + h[1]*0.2 + x[1])}
	}
	for i := range h {
		if a, b := graph.Float64s(fv)[i], graph.Float64s(rv)[i]; a != b || math.Abs(a-h[i]) > 1e-15 {
			t.Fatalf("folded %v, run %v, by hand %v", graph.Float64s(fv), graph.Float64s(rv), h)
		}
	}
}

func TestScanErrors(t *testing.T) {
	identity := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) { return c, x }
	cases := []struct {
		name  string
		build func(g *graph.Graph) []*graph.Node
		want  string
	}{
		{"sequences of different lengths", func(g *graph.Graph) []*graph.Node {
			_, ys := ops.Scan(identity, nil, []*graph.Node{g.Input("a", graph.Float64, 3), g.Input("b", graph.Float64, 4)})
			return ys
		}, "sequence 1 has 4 steps, sequence 0 has 3"},
		{"no sequence and no Steps", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.Scan(identity, []*graph.Node{g.Input("h", graph.Float64, 2)}, nil)
			return f
		}, "no sequence: give the number of steps with Steps"},
		{"Steps disagrees with the sequences", func(g *graph.Graph) []*graph.Node {
			_, ys := ops.Scan(identity, nil, []*graph.Node{g.Input("a", graph.Float64, 3)}, ops.Steps(5))
			return ys
		}, "sequence 0 has 3 steps, but Steps(5) was given"},
		{"scalar sequence", func(g *graph.Graph) []*graph.Node {
			_, ys := ops.Scan(identity, nil, []*graph.Node{g.Input("a", graph.Float64)})
			return ys
		}, "sequence 0 is a scalar"},
		{"carry of another shape", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{ops.Concat(0, c[0], x[0])}, nil
			}, []*graph.Node{g.Input("h", graph.Float64, 2)}, []*graph.Node{g.Input("a", graph.Float64, 3, 2)})
			return f
		}, "body returns carry 0 of type float64(4), want init's float64(2)"},
		{"wrong number of carries", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return nil, x
			}, []*graph.Node{g.Input("h", graph.Float64, 2)}, []*graph.Node{g.Input("a", graph.Float64, 3, 2)})
			return f
		}, "body returns 0 carries for 1"},
		{"body panics", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				panic("boom")
			}, []*graph.Node{g.Input("h", graph.Float64, 2)}, []*graph.Node{g.Input("a", graph.Float64, 3, 2)})
			return f
		}, "body: panicked: boom"},
		{"body fails to build", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{ops.MatMul(c[0], x[0])}, nil
			}, []*graph.Node{g.Input("h", graph.Float64, 2)}, []*graph.Node{g.Input("a", graph.Float64, 3, 2)})
			return f
		}, "MatMul"},
		{"body returns a node of another graph", func(g *graph.Graph) []*graph.Node {
			other := graph.New().Input("o", graph.Float64, 2)
			f, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{other}, nil
			}, []*graph.Node{g.Input("h", graph.Float64, 2)}, []*graph.Node{g.Input("a", graph.Float64, 3, 2)})
			return f
		}, "a node of an unrelated graph"},
		{"body makes an input", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{ops.Add(c[0], c[0].Graph().Input("stray", graph.Float64, 2))}, nil
			}, []*graph.Node{g.Input("h", graph.Float64, 2)}, nil, ops.Steps(2))
			return f
		}, `body makes input input "stray"`},
		{"body makes a parameter", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{ops.Add(c[0], c[0].Graph().Param("w", graph.NewDense(graph.Float64, 2)))}, nil
			}, []*graph.Node{g.Input("h", graph.Float64, 2)}, nil, ops.Steps(2))
			return f
		}, `body makes parameter param "w"`},
		{"nil init", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.Scan(identity, []*graph.Node{g.Input("h", graph.Float64, 2), nil}, nil, ops.Steps(2))
			return f
		}, "init 1 is nil"},
		{"negative Steps", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.Scan(identity, []*graph.Node{g.Input("h", graph.Float64, 2)}, nil, ops.Steps(-3))
			return f
		}, "Steps(-3) is negative"},
		{"unrelated graphs", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.Scan(identity, []*graph.Node{g.Input("h", graph.Float64, 2)}, []*graph.Node{graph.New().Input("x", graph.Float64, 3, 2)})
			return f
		}, "init and sequences belong to unrelated graphs"},
		{"nil body", func(g *graph.Graph) []*graph.Node {
			f, _ := ops.Scan(nil, []*graph.Node{g.Input("h", graph.Float64, 2)}, nil, ops.Steps(2))
			return f
		}, "body is nil"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			outs := c.build(g)
			if len(outs) == 0 || outs[0].Err() == nil {
				t.Fatalf("no error")
			}
			err := g.Err()
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "scan_behaviour_test.go") {
				t.Fatalf("error %v, want one containing %q and the caller's file", err, c.want)
			}
		})
	}
}

// A first-order gradient stores the forward carries (T of them) and
// nothing more: the backward loop's own carries are not stored, since no
// second derivative reads them, and the weight's gradient is summed over
// the steps without being carried. Values are the same with and without
// the pruning pass.
func TestScanStoresOnlyWhatIsRead(t *testing.T) {
	const T = 500
	outs, xs := scanModel(T)
	feeds := vm.Feeds{xs: graph.NewDense(graph.Float32, T, 4, 16)}
	for i := range feeds[xs].Float32s() {
		feeds[xs].Float32s()[i] = float32(math.Sin(float64(i)))
	}
	var results [][]float32
	for _, opts := range [][]compile.Option{nil, {compile.WithoutPass("prune")}} {
		p, err := compile.Compile(outs, opts...)
		if err != nil {
			t.Fatal(err)
		}
		stored := 0 // elements the loops write
		for _, in := range p.Instructions() {
			if strings.HasPrefix(in.Name(), "Scan") {
				for _, ty := range in.OutTypes {
					stored += ty.Size()
				}
			}
		}
		carries := T * 4 * 16
		if opts == nil && stored > carries+2*4*16+16*16 {
			t.Errorf("the loops write %d elements, want the forward carries' %d and the final values", stored, carries)
		}
		if opts != nil && stored < 2*carries {
			t.Errorf("without pruning the loops write %d elements: the test does not see the stored backward carries", stored)
		}
		m, err := vm.New(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Run(feeds); err != nil {
			t.Fatal(err)
		}
		var vals []float32
		for _, o := range outs {
			v, _ := m.Value(o)
			vals = append(vals, v.Float32s()...)
		}
		results = append(results, vals)
	}
	for i := range results[0] {
		if results[0][i] != results[1][i] {
			t.Fatalf("value %d: %v pruned, %v not", i, results[0][i], results[1][i])
		}
	}
}

// A Scan goes through DOT export, profiles and NaN checks like any op: a
// NaN made inside the body is reported naming the body's node.
func TestScanWithTheTools(t *testing.T) {
	g := graph.New()
	xs := g.Input("xs", graph.Float64, 3, 2)
	h0 := g.Param("h0", f64(t, []float64{2, 3}, 2))
	final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return []*graph.Node{ops.Log(ops.Mul(c[0], x[0]))}, nil
	}, []*graph.Node{h0}, []*graph.Node{xs})
	loss := ops.Sum(final[0])
	grads, err := compile.Grad(loss, h0)
	if err != nil {
		t.Fatal(err)
	}
	var dot strings.Builder
	if err := graph.WriteDot(&dot, g, graph.DotOptions{}); err != nil || !strings.Contains(dot.String(), "Scan") {
		t.Fatalf("graph DOT: %v\n%s", err, dot.String())
	}
	p, err := compile.Compile([]*graph.Node{loss, grads[0]})
	if err != nil {
		t.Fatal(err)
	}
	dot.Reset()
	if err := compile.WriteDot(&dot, p); err != nil || !strings.Contains(dot.String(), "Scan(reverse)") {
		t.Fatalf("program DOT: %v\n%s", err, dot.String())
	}
	m, err := vm.New(p, vm.WithNaNCheck(), vm.WithProfile())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(vm.Feeds{xs: f64(t, []float64{2, 3, 4, 5, 6, 7}, 3, 2)}); err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	if err := m.Profile().WriteTable(&table, 5); err != nil || !strings.Contains(table.String(), "Scan") {
		t.Fatalf("profile: %v\n%s", err, table.String())
	}
	err = m.Run(vm.Feeds{xs: f64(t, []float64{2, 3, -4, 5, 6, 7}, 3, 2)})
	if err == nil || !strings.Contains(err.Error(), "Log") || !strings.Contains(err.Error(), "step 1") {
		t.Fatalf("NaN in the body: got %v, want an error naming Log and the step", err)
	}
}
