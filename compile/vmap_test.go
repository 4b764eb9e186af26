package compile_test

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/optable"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

const vmapBatch = 3

// runVmapped compiles outputs and runs them once on feeds.
func runVmapped(t *testing.T, outputs []*graph.Node, feeds vm.Feeds) []*tensor.Dense {
	t.Helper()
	prog, err := compile.Compile(outputs)
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Run(feeds); err != nil {
		t.Fatal(err)
	}
	vals := make([]*tensor.Dense, len(outputs))
	for i, o := range outputs {
		v, err := m.Value(o)
		if err != nil {
			t.Fatal(err)
		}
		if vals[i], err = graph.CloneDense(v); err != nil {
			t.Fatal(err)
		}
	}
	return vals
}

// examplesOf returns vmapBatch variations of x, and them stacked along
// axis 0. Example b is x scaled by 1 + b/20 (signs and domains kept), or,
// when x holds whole numbers (labels, indices, a random op's step), x's
// elements rotated by b places (a scalar less b, made nonnegative).
func examplesOf(x *tensor.Dense) ([]*tensor.Dense, *tensor.Dense) {
	vals := graph.Float64s(x)
	whole := !slices.ContainsFunc(vals, func(v float64) bool { return v != math.Trunc(v) })
	var all []float64
	exs := make([]*tensor.Dense, vmapBatch)
	for b := range exs {
		v := make([]float64, len(vals))
		for i := range v {
			switch {
			case whole && len(v) == 1:
				v[i] = math.Abs(vals[i] - float64(b))
			case whole:
				v[i] = vals[(i+b)%len(v)]
			default:
				v[i] = vals[i] * (1 + 0.05*float64(b))
			}
		}
		exs[b], _ = graph.FromFloat64s(x.Dtype(), v, x.Shape()...)
		all = append(all, v...)
	}
	stacked, _ := graph.FromFloat64s(x.Dtype(), all, append([]int{vmapBatch}, x.Shape()...)...)
	return exs, stacked
}

// sameBitsDense reports whether a and b hold the same values bit for bit
// (dtype, shape and elements; NaNs of the same payload).
func sameBitsDense(a, b *tensor.Dense) bool {
	if a.Dtype() != b.Dtype() || !slices.Equal(a.Shape(), b.Shape()) {
		return false
	}
	x, y := graph.Float64s(a), graph.Float64s(b)
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			return false
		}
	}
	return true
}

// rowOf is row b of a batched value, along axis 0.
func rowOf(t *testing.T, x *tensor.Dense, b int) *tensor.Dense {
	t.Helper()
	shape := x.Shape()[1:]
	n := graph.ShapeSize(shape)
	d, err := graph.FromFloat64s(x.Dtype(), graph.Float64s(x)[b*n:(b+1)*n], shape...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Vmap of every row of the op table, and of its loops and branches,
// batching each float input in turn, equals vmapBatch separate runs of the
// row, bit for bit.
func TestVmapOpTable(t *testing.T) {
	for _, c := range slices.Concat(optable.Table(), optable.ScanTable(), optable.CondTable(), optable.WhileTable()) {
		for j, x := range c.Inputs {
			if !graph.IsFloat(x.Dtype()) {
				continue
			}
			t.Run(fmt.Sprintf("%s/input %d", c.Name(), j), func(t *testing.T) {
				checkVmapRow(t, c, j)
			})
		}
	}
}

// checkVmapRow batches input j of row c.
func checkVmapRow(t *testing.T, c optable.Case, j int) {
	exs, stacked := examplesOf(c.Inputs[j])

	// The reference: the row on one example at a time.
	g := graph.New()
	in := make([]*graph.Node, len(c.Inputs))
	feeds := vm.Feeds{}
	for i, x := range c.Inputs {
		in[i] = g.Input(fmt.Sprint("x", i), x.Dtype(), x.Shape()...)
		feeds[in[i]] = x
	}
	y := c.Build(in)
	want := make([]*tensor.Dense, vmapBatch)
	for b := range want {
		feeds[in[j]] = exs[b]
		want[b] = runVmapped(t, []*graph.Node{y}, feeds)[0]
	}

	// Vmap: input j with the examples along axis 0, the others shared.
	gb := graph.New()
	bin := make([]*graph.Node, len(c.Inputs))
	axes := make([]int, len(c.Inputs))
	bfeeds := vm.Feeds{}
	for i, x := range c.Inputs {
		axes[i] = compile.NotBatched
		bin[i] = gb.Input(fmt.Sprint("x", i), x.Dtype(), x.Shape()...)
		bfeeds[bin[i]] = x
	}
	axes[j] = 0
	bin[j] = gb.Input("batch", stacked.Dtype(), stacked.Shape()...)
	bfeeds[bin[j]] = stacked
	ys, err := compile.Vmap(func(ex []*graph.Node) []*graph.Node { return []*graph.Node{c.Build(ex)} }, bin, axes, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := runVmapped(t, ys, bfeeds)[0]
	for b := range want {
		if r := rowOf(t, got, b); !sameBitsDense(r, want[b]) {
			t.Errorf("example %d: got %v, want %v", b, graph.Float64s(r), graph.Float64s(want[b]))
		}
	}
}

// Mistakes in Vmap's arguments are errors naming them and the caller's
// file:line, never panics.
func TestVmapErrors(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3, 2)
	y := g.Input("y", graph.Float64, 4, 2)
	w := g.Input("w", graph.Float64, 2)
	id := func(ex []*graph.Node) []*graph.Node { return ex[:1] }
	other := graph.New().Input("z", graph.Float64, 2)
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"in axis out of range", func() error { _, err := compile.Vmap(id, []*graph.Node{x}, []int{2}, nil); return err },
			"in axis 2 of input 0 is out of range for its shape (3,2)"},
		{"negative in axis out of range", func() error { _, err := compile.Vmap(id, []*graph.Node{x}, []int{-3}, nil); return err },
			"in axis -3 of input 0 is out of range for its shape (3,2)"},
		{"batch sizes disagree", func() error { _, err := compile.Vmap(id, []*graph.Node{x, y}, nil, nil); return err },
			"input 1 has 4 examples along axis 0, input 0 has 3"},
		{"too few in axes", func() error { _, err := compile.Vmap(id, []*graph.Node{x, w}, []int{0}, nil); return err },
			"1 in axes for 2 inputs"},
		{"too many out axes", func() error { _, err := compile.Vmap(id, []*graph.Node{x}, nil, []int{0, 1}); return err },
			"2 out axes for 1 outputs"},
		{"out axis out of range", func() error { _, err := compile.Vmap(id, []*graph.Node{x}, nil, []int{2}); return err },
			"out axis 2 of output 0 is out of range for its example's shape (2)"},
		{"batched output marked NotBatched", func() error {
			_, err := compile.Vmap(id, []*graph.Node{x}, nil, []int{compile.NotBatched})
			return err
		}, "output 0 depends on the batch: give it an out axis, not NotBatched"},
		{"nothing batched", func() error {
			_, err := compile.Vmap(id, []*graph.Node{w}, []int{compile.NotBatched}, nil)
			return err
		}, "no input is batched"},
		{"nil f", func() error { _, err := compile.Vmap(nil, []*graph.Node{x}, nil, nil); return err }, "f is nil"},
		{"nil input", func() error { _, err := compile.Vmap(id, []*graph.Node{nil}, nil, nil); return err }, "input 0 is nil"},
		{"f panics", func() error {
			_, err := compile.Vmap(func([]*graph.Node) []*graph.Node { panic("boom") }, []*graph.Node{x}, nil, nil)
			return err
		}, "f panicked: boom"},
		{"f returns nil", func() error {
			_, err := compile.Vmap(func([]*graph.Node) []*graph.Node { return []*graph.Node{nil} }, []*graph.Node{x}, nil, nil)
			return err
		}, "f returns a nil or poisoned node as output 0"},
		{"f returns a node of another graph", func() error {
			_, err := compile.Vmap(func([]*graph.Node) []*graph.Node { return []*graph.Node{other} }, []*graph.Node{x}, nil, nil)
			return err
		}, "f returns input \"z\" #0 float64(2), a node of an unrelated graph"},
		{"f makes a parameter", func() error {
			_, err := compile.Vmap(func(ex []*graph.Node) []*graph.Node {
				p := ex[0].Graph().Param("p", graph.NewDense(graph.Float64, 2))
				return []*graph.Node{ops.Mul(ex[0], p)}
			}, []*graph.Node{x}, nil, nil)
			return err
		}, "f makes param \"p\" #1 float64(2): make parameters outside f and read them there"},
	}
	for _, c := range cases {
		err := c.run()
		if err == nil || !strings.Contains(err.Error(), "Vmap: "+c.want) || !strings.Contains(err.Error(), "at vmap_test.go:") {
			t.Errorf("case %s: got %v, want %q at vmap_test.go", c.name, err, c.want)
		}
	}
	_, err := compile.Vmap(id, []*graph.Node{x}, []int{5}, nil)
	_, _, line, _ := runtime.Caller(0)
	if want := fmt.Sprintf("at vmap_test.go:%d", line-1); err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got %v, want an error ending %q", err, want)
	}
	if err := g.Err(); err != nil {
		t.Errorf("the graph is poisoned: %v", err)
	}
}

// The op table's rows of ops with batching rules batch without a loop.
func TestVmapRulesDoNotLoop(t *testing.T) {
	ruled := []string{"Add", "Sub", "Mul", "Div", "Pow", "Maximum", "Minimum", "Greater", "Less", "Equal",
		"Neg", "Exp", "Log", "Tanh", "Sigmoid", "ReLU", "GELU", "SiLU", "Where", "Identity", "StopGradient", "Cast",
		"MatMul", "MatMulT", "MatMulAdd", "Sum", "SumKeepDims", "Mean", "Max", "LogSumExp", "Softmax", "LogSoftmax",
		"Reshape", "Transpose", "BroadcastTo", "SumTo", "Slice", "Pad", "Concat", "Flatten"}
	for _, c := range optable.Table() {
		if !slices.Contains(ruled, c.Builder) {
			continue
		}
		for j, x := range c.Inputs {
			if !graph.IsFloat(x.Dtype()) {
				continue
			}
			stop := compile.LoopedOps()
			checkVmapRow(t, c, j)
			if looped := stop(); len(looped) > 0 {
				t.Errorf("case %s, input %d: looped %v", c.Name(), j, looped)
			}
		}
	}
}
