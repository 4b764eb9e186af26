package cuda

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// A Vmapped Cond whose predicate is batched (both branches for the
// batch, each example's result selected, the branches' inputs through
// GradGate) runs wholly on the device, with its per-example gradient:
// no instruction on the host, the values the CPU's; its integer outputs
// (an int64 beyond 2⁵³, an int32), selected exactly, are the CPU's bit
// for bit.
func TestVmapCondOnDevice(t *testing.T) {
	devs := testDevices(t)
	for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
		g := graph.New()
		x := g.Input("x", dtype, 5)
		w := g.Input("w", dtype)
		big := g.Input("big", graph.Int64, 5)
		small := g.Input("small", graph.Int32, 5)
		ys, err := compile.Vmap(func(ex []*graph.Node) []*graph.Node {
			v := ex[0]
			y := ops.Cond(ops.Greater(v, ops.Sub(w, w)), func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Mul(ops.Log(o[0]), w), o[1], o[2]}
			}, func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Mul(o[0], w), g.Scalar(-7, graph.Int64), g.Scalar(-9, graph.Int32)}
			}, []*graph.Node{v, ex[1], ex[2]})
			grad, err := compile.Grad(y[0], v)
			if err != nil {
				panic(err)
			}
			return append(y, grad[0])
		}, []*graph.Node{x, big, small}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := compile.Compile(ys)
		if err != nil {
			t.Fatal(err)
		}
		xv, _ := graph.FromFloat64s(dtype, []float64{2, -1, 0, 0.5, 3}, 5)
		wv, _ := graph.FromFloat64s(dtype, []float64{1.5})
		bigs := []int64{1<<62 + 1, 1<<53 + 1, -(1<<60 + 3), 1<<55 + 7, math.MaxInt64}
		smalls := []int32{math.MaxInt32, 5, -6, math.MinInt32, 8}
		feeds := vm.Feeds{x: xv, w: wv,
			big:   tensor.New(tensor.WithShape(5), tensor.WithBacking(slices.Clone(bigs))),
			small: tensor.New(tensor.WithShape(5), tensor.WithBacking(slices.Clone(smalls)))}
		wantBig := []int64{bigs[0], -7, -7, bigs[3], bigs[4]}
		wantSmall := []int64{int64(smalls[0]), -9, -9, int64(smalls[3]), int64(smalls[4])}
		for _, dev := range devs {
			cpu, m := machines(t, prog, dev)
			if err := compareRun(cpu, m, feeds, []*graph.Node{ys[0], ys[3]}); err != nil {
				t.Errorf("%v on %v: %v", dtype, dev, err)
			}
			for k, want := range map[int][]int64{1: wantBig, 2: wantSmall} {
				for where, mach := range map[string]*vm.Machine{"the CPU": cpu, dev.String(): m} {
					v, err := mach.Value(ys[k])
					if err != nil {
						t.Fatal(err)
					}
					if got := graph.Int64s(v); !slices.Equal(got, want) {
						t.Errorf("%v on %s, output %d (%v): got %v, want %v", dtype, where, k, v.Dtype(), got, want)
					}
				}
			}
			if host := hostInstructions(prog, m); len(host) > 0 {
				t.Errorf("%v on %v: on the host: %v", dtype, dev, host)
			}
			cpu.Close()
			m.Close()
		}
	}
}

// Where of integers (a float cond, an integer one), Transpose and
// BroadcastTo of integers run on the device, their int64 values beyond
// 2⁵³ the CPU's bit for bit.
func TestIntegerSelectionOnDevice(t *testing.T) {
	devs := testDevices(t)
	g := graph.New()
	c := g.Input("c", graph.Float32, 3)
	ci := g.Input("ci", graph.Int32, 2, 1)
	a := g.Input("a", graph.Int64, 2, 3)
	b := g.Input("b", graph.Int64)
	s := g.Input("s", graph.Int32, 3)
	outs := []*graph.Node{
		ops.Where(c, a, b), ops.Where(ci, b, a), ops.Transpose(a), ops.BroadcastTo(s, 2, 3),
		ops.Where(c, ops.Reshape(ops.Transpose(ops.BroadcastTo(s, 1, 3)), 3), g.Const(tensor.New(tensor.WithShape(3), tensor.WithBacking([]int32{-1, -2, -3})))),
	}
	prog, err := compile.Compile(outs)
	if err != nil {
		t.Fatal(err)
	}
	bigs := []int64{1<<53 + 1, -(1<<60 + 3), math.MaxInt64, math.MinInt64, 1<<62 + 5, 7}
	cv, _ := graph.FromFloat64s(graph.Float32, []float64{1, 0, math.NaN()}, 3)
	feeds := vm.Feeds{c: cv,
		ci: tensor.New(tensor.WithShape(2, 1), tensor.WithBacking([]int32{0, -4})),
		a:  tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(slices.Clone(bigs))),
		b:  tensor.New(tensor.WithShape(), tensor.WithBacking([]int64{-(1<<55 + 1)})),
		s:  tensor.New(tensor.WithShape(3), tensor.WithBacking([]int32{math.MaxInt32, -6, math.MinInt32}))}
	wants := [][]int64{
		{bigs[0], -(1<<55 + 1), bigs[2], bigs[3], -(1<<55 + 1), bigs[5]},
		{bigs[0], bigs[1], bigs[2], -(1<<55 + 1), -(1<<55 + 1), -(1<<55 + 1)},
		{bigs[0], bigs[3], bigs[1], bigs[4], bigs[2], bigs[5]},
		{math.MaxInt32, -6, math.MinInt32, math.MaxInt32, -6, math.MinInt32},
		{math.MaxInt32, -2, math.MinInt32},
	}
	for _, dev := range devs {
		m, err := vm.New(prog, vm.OnDevice(dev))
		if err != nil {
			t.Fatal(err)
		}
		cpu, err := vm.New(prog)
		if err != nil {
			t.Fatal(err)
		}
		for _, mach := range []*vm.Machine{cpu, m} {
			where := "the CPU"
			if mach == m {
				where = dev.String()
			}
			if err := mach.Run(feeds); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			for k, o := range outs {
				v, err := mach.Value(o)
				if err != nil {
					t.Fatal(err)
				}
				if got := graph.Int64s(v); v.Dtype() != o.DType() || !slices.Equal(got, wants[k]) {
					t.Errorf("%s, output %d: got %v %v, want %v %v", where, k, v.Dtype(), got, o.DType(), wants[k])
				}
			}
		}
		for i, in := range prog.Instructions() {
			if m.OnHost(i) {
				t.Errorf("%v: %s (%v) runs on the host", dev, in.Name(), in.Node)
			}
		}
		cpu.Close()
		m.Close()
	}
}

// A Vmapped While with int32 and int64 carries (and its per-example
// gradient) is batched, not looped over the examples, and adds no host
// instruction to those of the loops themselves: the loops (a While's,
// stopping on a value, runs on the host) and the Cast of its step count
// to int64. Its batching's selections, broadcasts and moves of integers
// run on the device; the values are the CPU's.
func TestVmapWhileOnDevice(t *testing.T) {
	devs := testDevices(t)
	g := graph.New()
	lim := g.Input("limit", graph.Float64, 4)
	big := g.Input("big", graph.Int64, 4)
	small := g.Input("small", graph.Int32, 4)
	ys, err := compile.Vmap(func(ex []*graph.Node) []*graph.Node {
		one := ops.Div(ex[0], ex[0])
		final, steps := ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(c[0], ex[0]) },
			func(c []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Add(c[0], one), ops.Mul(c[1], ex[0]), c[3], c[2], c[5], c[4]}
			}, []*graph.Node{ops.Sub(ex[0], ex[0]), one, g.Scalar(3, graph.Int64), ex[1], g.Scalar(-4, graph.Int32), ex[2]}, ops.MaxSteps(5))
		grad, err := compile.Grad(final[1], ex[0])
		if err != nil {
			panic(err)
		}
		return append(final, steps, grad[0])
	}, []*graph.Node{lim, big, small}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := compile.Compile(ys)
	if err != nil {
		t.Fatal(err)
	}
	lv, _ := graph.FromFloat64s(graph.Float64, []float64{-1, 1.5, 3, 9}, 4)
	feeds := vm.Feeds{lim: lv,
		big:   tensor.New(tensor.WithShape(4), tensor.WithBacking([]int64{1<<62 + 1, 1<<53 + 1, math.MinInt64, math.MaxInt64})),
		small: tensor.New(tensor.WithShape(4), tensor.WithBacking([]int32{math.MaxInt32, 5, -6, math.MinInt32}))}
	for _, dev := range devs {
		cpu, m := machines(t, prog, dev)
		if err := compareRun(cpu, m, feeds, []*graph.Node{ys[0], ys[1], ys[7]}); err != nil {
			t.Errorf("%v: %v", dev, err)
		}
		for _, y := range ys[2:7] {
			want, _ := cpu.Value(y)
			got, _ := m.Value(y)
			if !slices.Equal(graph.Int64s(got), graph.Int64s(want)) {
				t.Errorf("%v: %v: got %v, want the CPU's %v", dev, y, graph.Int64s(got), graph.Int64s(want))
			}
		}
		for i, in := range prog.Instructions() {
			var op any = in.Op
			if op == nil {
				op = in.Multi
			}
			// The While's loops stop on a value (or skip its padding);
			// a plain Scan would be a loop over the examples.
			_, plain := ops.ScanLayoutOf(op)
			loop := strings.HasPrefix(in.Name(), "Scan") && !plain
			count := in.Name() == "Cast" && in.Node.DType() == graph.Int64
			if m.OnHost(i) && !loop && !count {
				t.Errorf("%v: %s (%v) runs on the host", dev, in.Name(), in.Node)
			}
		}
		cpu.Close()
		m.Close()
	}
}
