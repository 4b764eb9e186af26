package ops_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

const mlpLayers, mlpWidth, mlpBatch = 50, 256, 64

// deepMLP is a perceptron of 50 tanh layers of width 256 on a batch of
// 64 (float32), a squared error for loss, its layers grouped into
// checkpointed segments of a given length (0: none).
type deepMLP struct {
	loss      *graph.Node
	params    []*graph.Node
	grads     []*graph.Node
	feeds     vm.Feeds
	internals map[*graph.Node]bool // the values the segments compute inside
	backward  []*graph.Node        // the nodes Grad made
}

func newDeepMLP(t testing.TB, segment int) *deepMLP {
	r := rand.New(rand.NewPCG(5, 7))
	random := func(scale float64, shape ...int) *tensor.Dense {
		v := make([]float64, graph.ShapeSize(shape))
		for i := range v {
			v[i] = scale * (2*r.Float64() - 1)
		}
		d, err := graph.FromFloat64s(graph.Float32, v, shape...)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	g := graph.New()
	m := &deepMLP{internals: map[*graph.Node]bool{}}
	x := g.Input("x", graph.Float32, mlpBatch, mlpWidth)
	target := g.Input("target", graph.Float32, mlpBatch, mlpWidth)
	m.feeds = vm.Feeds{x: random(1, mlpBatch, mlpWidth), target: random(0.5, mlpBatch, mlpWidth)}
	for range mlpLayers {
		m.params = append(m.params, g.Param("w", random(1.5/math.Sqrt(mlpWidth), mlpWidth, mlpWidth)), g.Param("b", random(0.1, mlpWidth)))
	}
	layers := func(h *graph.Node, from, to int) *graph.Node {
		for l := from; l < to; l++ {
			h = ops.Tanh(ops.Add(ops.MatMul(h, m.params[2*l]), m.params[2*l+1]))
		}
		return h
	}
	h := x
	for l := 0; l < mlpLayers; {
		if segment == 0 {
			h, l = layers(h, 0, mlpLayers), mlpLayers
			continue
		}
		from, to := l, min(l+segment, mlpLayers)
		start := g.Len()
		h = ops.Checkpoint(func(in []*graph.Node) []*graph.Node { return []*graph.Node{layers(in[0], from, to)} }, h)[0]
		for _, n := range g.Nodes()[start:] {
			m.internals[n] = n.Kind() == graph.KindOp && n.OpName() != "Checkpoint"
		}
		l = to
	}
	m.loss = ops.Mean(ops.Square(ops.Sub(h, target)))
	start := g.Len()
	var err error
	if m.grads, err = compile.Grad(m.loss, m.params...); err != nil {
		t.Fatal(err)
	}
	m.backward = g.Nodes()[start:]
	return m
}

// step is the training step's program: the loss, and SGD's updates.
func (m *deepMLP) step(t testing.TB, opts ...compile.Option) *compile.Program {
	updates := map[*graph.Node]*graph.Node{}
	for i, p := range m.params {
		updates[p] = ops.Sub(p, ops.Scale(m.grads[i], 0.01))
	}
	p, err := compile.Compile([]*graph.Node{m.loss}, append(opts, compile.WithUpdates(updates))...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// plannedBytes is the storage the memory planner gives the values of the
// given number of elements a program computes (its computed slots; size
// 0: all), and its bodies' slots.
func plannedBytes(p *compile.Program, size int) int64 {
	var n int64
	for _, s := range p.Slots() {
		if s.Kind == graph.KindOp && (size == 0 || s.Type.Size() == size) {
			n += int64(s.Type.Size()) * int64(s.Type.DType.Size())
		}
	}
	for _, in := range p.Instructions() {
		for _, b := range in.Bodies {
			for _, s := range b.Slots() {
				if s.Kind != graph.KindConst {
					n += int64(s.Type.Size()) * int64(s.Type.DType.Size())
				}
			}
		}
	}
	return n
}

// Checkpointing a 50-layer perceptron every 7 layers (about √50
// segments): the gradient reads none of the values the segments computed
// in the forward pass, the memory the planner gives the training step's
// activations (the computed slots of a layer's size, batch × width) falls
// to at most 30% of the step without checkpoints, with every pass as in
// program order (without the fuse pass, whose reordering must keep each
// segment's recomputed values from outliving it), and the loss,
// gradients and updated parameters are those of the step without
// checkpoints, bit for bit (the recomputation runs the same kernels on
// the same values).
func TestCheckpointedMLP(t *testing.T) {
	plain, checked := newDeepMLP(t, 0), newDeepMLP(t, 7)
	for _, n := range checked.backward {
		for _, x := range n.Inputs() {
			if checked.internals[x] {
				t.Fatalf("the gradient's %v reads %v, a value a segment computed in the forward pass", n, x)
			}
		}
	}
	for _, c := range []struct {
		name string
		opts []compile.Option
	}{{"every pass", nil}, {"in program order", []compile.Option{compile.WithoutPass("fuse")}}} {
		opts := append(c.opts, compile.WithChecks())
		ps, cs := plain.step(t, opts...), checked.step(t, opts...)
		pb, cb := plannedBytes(ps, mlpBatch*mlpWidth), plannedBytes(cs, mlpBatch*mlpWidth)
		t.Logf("%s: activations' planned bytes: %d without checkpoints, %d with (%.1f%%); all computed values': %d and %d",
			c.name, pb, cb, 100*float64(cb)/float64(pb), plannedBytes(ps, 0), plannedBytes(cs, 0))
		if cb*10 > pb*3 {
			t.Errorf("%s: the checkpointed step plans %d bytes for activations, more than 30%% of the step without checkpoints (%d)", c.name, cb, pb)
		}
		want, got := runStep(t, ps, plain), runStep(t, cs, checked)
		for i := range want {
			for j := range want[i] {
				if got[i][j] != want[i][j] {
					t.Fatalf("%s: the step's output %d (0: the loss, then the updated parameters), element %d: %v checkpointed, %v without",
						c.name, i, j, got[i][j], want[i][j])
				}
			}
		}
	}
	want := run(t, append([]*graph.Node{plain.loss}, plain.grads...), plain.feeds)
	got := run(t, append([]*graph.Node{checked.loss}, checked.grads...), checked.feeds)
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("output %d, element %d: %v checkpointed, %v without", i, j, got[i][j], want[i][j])
			}
		}
	}
}

// runStep runs the training step p of net once and returns the loss and
// the updated parameters' values.
func runStep(t testing.TB, p *compile.Program, net *deepMLP) [][]float64 {
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Run(net.feeds); err != nil {
		t.Fatal(err)
	}
	loss, err := m.Value(net.loss)
	if err != nil {
		t.Fatal(err)
	}
	vals := [][]float64{graph.Float64s(loss)}
	for _, w := range net.params {
		v, err := m.Get(w)
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, graph.Float64s(v))
	}
	return vals
}

// BenchmarkCheckpointedMLP times the training step of the 50-layer
// perceptron without checkpoints and checkpointed every 7 layers, with
// every pass and in program order (see TestCheckpointedMLP), reporting
// the planned bytes of all computed slots and of the activations'. The
// machine runs on one thread, and the process's CPU time per step is
// reported too (cpu-ns/op): on a shared machine, the time it ran whether
// or not other processes kept it waiting for a core.
func BenchmarkCheckpointedMLP(b *testing.B) {
	for _, c := range []struct {
		name    string
		segment int
		opts    []compile.Option
	}{{"plain", 0, nil}, {"checkpointed", 7, nil},
		{"plain/in-order", 0, []compile.Option{compile.WithoutPass("fuse")}},
		{"checkpointed/in-order", 7, []compile.Option{compile.WithoutPass("fuse")}}} {
		b.Run(c.name, func(b *testing.B) {
			net := newDeepMLP(b, c.segment)
			p := net.step(b, c.opts...)
			m, err := vm.New(p, vm.WithThreads(1))
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			if err := m.Run(net.feeds); err != nil {
				b.Fatal(err)
			}
			start, ok := processCPU()
			for b.Loop() {
				if err := m.Run(net.feeds); err != nil {
					b.Fatal(err)
				}
			}
			if end, ok2 := processCPU(); ok && ok2 {
				b.ReportMetric(float64((end-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
			b.ReportMetric(float64(plannedBytes(p, 0)), "planned-bytes")
			b.ReportMetric(float64(plannedBytes(p, mlpBatch*mlpWidth)), "activation-bytes")
		})
	}
}

func TestCheckpointErrors(t *testing.T) {
	same := func(in []*graph.Node) []*graph.Node { return in }
	cases := []struct {
		name  string
		build func(g *graph.Graph) []*graph.Node
		want  string
	}{
		{"no inputs", func(g *graph.Graph) []*graph.Node { return ops.Checkpoint(same) },
			"no inputs: f's values are recomputed from its inputs, give at least one"},
		{"nil input", func(g *graph.Graph) []*graph.Node {
			return ops.Checkpoint(same, g.Input("x", graph.Float64, 2), nil)
		}, "input 1 is nil"},
		{"nil f", func(g *graph.Graph) []*graph.Node { return ops.Checkpoint(nil, g.Input("x", graph.Float64, 2)) },
			"f is nil"},
		{"f panics", func(g *graph.Graph) []*graph.Node {
			return ops.Checkpoint(func([]*graph.Node) []*graph.Node { panic("boom") }, g.Input("x", graph.Float64, 2))
		}, "f panicked: boom"},
		{"f returns nothing", func(g *graph.Graph) []*graph.Node {
			return ops.Checkpoint(func([]*graph.Node) []*graph.Node { return nil }, g.Input("x", graph.Float64, 2))
		}, "f returns no outputs"},
		{"f returns nil", func(g *graph.Graph) []*graph.Node {
			return ops.Checkpoint(func(in []*graph.Node) []*graph.Node { return []*graph.Node{in[0], nil} }, g.Input("x", graph.Float64, 2))
		}, "f returns a nil or poisoned node"},
		{"f makes a parameter", func(g *graph.Graph) []*graph.Node {
			return ops.Checkpoint(func(in []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Add(in[0], g.Param("w", graph.NewDense(graph.Float64, 2)))}
			}, g.Input("x", graph.Float64, 2))
		}, `f makes parameter param "w"`},
		{"f returns a node of another graph", func(g *graph.Graph) []*graph.Node {
			return ops.Checkpoint(func(in []*graph.Node) []*graph.Node {
				return []*graph.Node{graph.New().Input("y", graph.Float64, 2)}
			}, g.Input("x", graph.Float64, 2))
		}, `f returns input "y" #0 float64(2), a node of an unrelated graph`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outs := c.build(graph.New())
			if len(outs) == 0 || outs[0].Err() == nil {
				t.Fatalf("no error")
			}
			err := outs[0].Err()
			if !strings.Contains(err.Error(), "nabla: Checkpoint: "+c.want) || !strings.Contains(err.Error(), "checkpoint_test.go:") {
				t.Fatalf("error %v, want one from Checkpoint containing %q and the caller's file", err, c.want)
			}
		})
	}
}

// Checkpoint's forward mode, and a Hessian (forward over reverse, so
// through the recomputation), are those of the same function unchecked.
func TestCheckpointForwardModeAndHessian(t *testing.T) {
	build := func(checked bool) []*graph.Node {
		g := graph.New()
		x := g.Param("x", f64(t, []float64{0.3, -0.7, 1.1}, 3))
		w := g.Param("w", f64(t, []float64{0.9, -0.4, 0.6}, 3))
		f := func(in []*graph.Node) []*graph.Node {
			h := ops.Tanh(ops.Mul(in[0], w))
			return []*graph.Node{ops.Mul(ops.Sin(h), in[0])}
		}
		y := f([]*graph.Node{x})[0]
		if checked {
			y = ops.Checkpoint(f, x)[0]
		}
		loss := ops.Sum(ops.Square(y))
		jvp, err := compile.JVP([]*graph.Node{y}, []*graph.Node{x}, []*graph.Node{g.Const(f64(t, []float64{1, -2, 0.5}, 3))})
		if err != nil {
			t.Fatal(err)
		}
		h, err := compile.Hessian(loss, x)
		if err != nil {
			t.Fatal(err)
		}
		return append(jvp, h)
	}
	want, got := run(t, build(false), nil), run(t, build(true), nil)
	for i := range want {
		for j := range want[i] {
			if math.Abs(got[i][j]-want[i][j]) > 1e-14*math.Max(1, math.Abs(want[i][j])) {
				t.Fatalf("output %d: %v checkpointed, %v without", i, got[i], want[i])
			}
		}
	}
}
