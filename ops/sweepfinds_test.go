package ops_test

import (
	"math"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// TestSweepFindsNameTheBuilder holds what TestOpSweep found, each with the
// exact error: a composite builder's mistake is in its own name (not that
// of an op it builds from), a nil input names the builder and the line, a
// zero tensor.Dtype is "invalid" (its String method panics inside the
// message), and an out-of-range axis of MoveAxis is an error (it panicked).
func TestSweepFindsNameTheBuilder(t *testing.T) {
	same := func(c []*graph.Node) []*graph.Node { return c }
	yes := func(c []*graph.Node) *graph.Node { return ops.Sum(c[0]) }
	cases := []struct {
		name  string
		build func(g *graph.Graph) *graph.Node
		want  string
	}{
		{"softmax of nil", func(*graph.Graph) *graph.Node { return ops.Softmax(nil, 0) },
			"nabla: Softmax: no graph: every input is nil"},
		{"sum of nil", func(*graph.Graph) *graph.Node { return ops.Sum(nil) }, "nabla: Sum: no graph: every input is nil"},
		{"batch norm of a nil weight", func(g *graph.Graph) *graph.Node {
			return ops.BatchNorm(g.Input("x", graph.Float64, 2, 3), nil, g.Input("b", graph.Float64, 3), 1e-5)
		}, "nabla: BatchNorm: input 1 is nil"},
		{"batch norm of integers", func(g *graph.Graph) *graph.Node {
			w := g.Input("w", graph.Int32, 3)
			return ops.BatchNorm(g.Input("x", graph.Int32, 2, 3), w, w, 1e-5)
		}, "nabla: BatchNorm: int32(2,3) is not supported: the op computes on float32 or float64 (convert with ops.Cast) (inputs int32(2,3), int32(3) and int32(3))"},
		{"batch norm of an empty batch", func(g *graph.Graph) *graph.Node {
			return ops.BatchNorm(g.Input("x", graph.Float64, 0, 2, 5, 5), g.Input("w", graph.Float64, 2), g.Input("b", graph.Float64, 2), 0.5)
		}, "nabla: BatchNorm: (0,2,5,5) has no values per channel (inputs float64(0,2,5,5), float64(2) and float64(2))"},
		{"flatten of nil", func(*graph.Graph) *graph.Node { return ops.Flatten(nil, 1) }, "nabla: Flatten: no graph: every input is nil"},
		{"cholesky solve of a vector", func(g *graph.Graph) *graph.Node {
			return ops.CholeskySolve(g.Input("l", graph.Float64, 3), g.Input("b", graph.Float64, 3, 1))
		}, "nabla: CholeskySolve: shape (3) is not a matrix or a batch of matrices (rank ≥ 2) (inputs float64(3) and float64(3,1))"},
		{"channel variance of a vector", func(g *graph.Graph) *graph.Node { return ops.ChannelVar(g.Input("x", graph.Float64, 3)) },
			"nabla: ChannelVar: want (N, C, ...) with the channels on axis 1, got (3) (inputs float64(3) and float64(3))"},
		{"log det of integers", func(g *graph.Graph) *graph.Node { return ops.LogDet(g.Input("a", graph.Int64, 3)) },
			"nabla: LogDet: int64(3) is not supported: the op computes on float32 or float64 (convert with ops.Cast) (inputs int64(3))"},
		{"trace of integers", func(g *graph.Graph) *graph.Node { return ops.Trace(g.Input("a", graph.Int64, 3)) },
			"nabla: Trace: int64(3) is not supported"},
		{"bernoulli at a step that is not a scalar", func(g *graph.Graph) *graph.Node {
			return ops.RandomBernoulli(g.Input("step", graph.Float64, 3), ops.Stream{}, g.Input("p", graph.Float64, 3))
		}, "nabla: RandomBernoulli: step must be a scalar, got float64(3) (inputs float64(3) and float64(3))"},
		{"generator stepping an integer", func(g *graph.Graph) *graph.Node {
			gen := &ops.Generator{Step: g.Input("step", graph.Int32, 2, 3)}
			return gen.Normal(graph.Float64, 2)
		}, `nabla: Generator: Step is input "step" #0 int32(2,3), not a float64 scalar: make the generator with ops.NewGenerator`},
		{"cast to the zero dtype", func(g *graph.Graph) *graph.Node { return ops.Cast(g.Input("x", graph.Float64, 2), tensor.Dtype{}) },
			"nabla: Cast: cannot cast to invalid: the dtypes are float32, float64, int32 and int64 (inputs float64(2))"},
		{"one-hot rows of the zero dtype", func(g *graph.Graph) *graph.Node {
			return ops.OneHot(g.Input("y", graph.Int64, 2), 3, tensor.Dtype{})
		}, "nabla: OneHot: the rows' dtype must be float32 or float64, got invalid (inputs int64(2))"},
		{"uniform of the zero dtype", func(g *graph.Graph) *graph.Node {
			return ops.RandomUniform(g.Scalar(0, graph.Float64), ops.Stream{}, tensor.Dtype{}, 2)
		}, "nabla: RandomUniform: dtype invalid is not supported (float32 or float64)"},
		{"eye of a nil graph", func(*graph.Graph) *graph.Node { return ops.Eye(nil, graph.Float64, 3) },
			"nabla: Eye: the graph is nil: make one with graph.New"},
		{"while of MaxInt steps", func(g *graph.Graph) *graph.Node {
			f, _ := ops.While(yes, same, []*graph.Node{g.Input("h", graph.Float64)}, ops.MaxSteps(math.MaxInt))
			return f[0]
		}, "nabla: While: MaxSteps(9223372036854775807): the loop keeps a flag per step: shape (9223372036854775807) needs more bytes than an int can count"},
		{"fixed point of MaxInt steps", func(g *graph.Graph) *graph.Node {
			return ops.FixedPoint(ops.Neg, g.Input("x", graph.Float64, 2), 1e-9, math.MaxInt)
		}, "nabla: FixedPoint: maxSteps 9223372036854775807: the loop keeps a flag per step: shape (9223372036854775807) needs more bytes than an int can count"},
		{"channel affine of nil, without scale or shift", func(*graph.Graph) *graph.Node { return ops.ChannelAffine(nil, nil, nil) },
			"nabla: ChannelAffine: no graph: every input is nil"},
		{"channel affine of a vector, without scale or shift", func(g *graph.Graph) *graph.Node {
			return ops.ChannelAffine(g.Input("x", graph.Float64, 3), nil, nil)
		}, "nabla: ChannelAffine: want (N, C, ...) with the channels on axis 1, got (3) (inputs float64(3))"},
		{"move axis out of range", func(g *graph.Graph) *graph.Node { return ops.MoveAxis(g.Input("x", graph.Float64, 3, 0), 8, 9) },
			"nabla: MoveAxis: axis 8 out of range for rank 2 (inputs float64(3,0))"},
		{"move axis of nil", func(*graph.Graph) *graph.Node { return ops.MoveAxis(nil, 0, 0) },
			"nabla: MoveAxis: no graph: every input is nil"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.build(graph.New()).Err()
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, c.want) || !strings.Contains(msg, " at sweepfinds_test.go:") {
				t.Errorf("got  %q\nwant %q ... at sweepfinds_test.go:…", msg, c.want)
			}
		})
	}
}

// MoveAxis takes NumPy's negative axes, and moves the elements as the
// transpose of the same permutation does.
func TestMoveAxisNegativeAxes(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3, 4)
	y := ops.MoveAxis(x, -1, 0)
	want := ops.Transpose(x, 2, 0, 1)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	if got := graph.ShapeString(y.Shape()); got != "(4,2,3)" {
		t.Fatalf("shape %s, want (4,2,3)", got)
	}
	p, err := compile.Compile([]*graph.Node{y, want})
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]float64, 24)
	for i := range vals {
		vals[i] = float64(i)
	}
	in, _ := graph.FromFloat64s(graph.Float64, vals, 2, 3, 4)
	if err := m.Run(vm.Feeds{x: in}); err != nil {
		t.Fatal(err)
	}
	yv, err := m.Value(y)
	if err != nil {
		t.Fatal(err)
	}
	wv, err := m.Value(want)
	if err != nil {
		t.Fatal(err)
	}
	got, exp := yv.Data().([]float64), wv.Data().([]float64)
	for i := range exp {
		if got[i] != exp[i] {
			t.Fatalf("element %d: %v, want %v", i, got[i], exp[i])
		}
	}
}

// FixedPoint of an empty x is x's map at once (no element moves); it built
// a convergence test over no elements, which Max refused naming While.
func TestFixedPointOfNothing(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 0)
	y := ops.FixedPoint(ops.Neg, x, 1e-9, 5)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	p, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(vm.Feeds{x: graph.NewDense(graph.Float64, 0)}); err != nil {
		t.Fatal(err)
	}
	v, err := m.Value(y)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Shape(); len(got) != 1 || got[0] != 0 {
		t.Errorf("shape %v, want (0)", got)
	}
}

// BroadcastIndexC of a type that does not broadcast to the shape is ""
// (it indexed a stride at -1 and panicked); ElementwiseC's errors name it.
func TestCodegenHelpersRefuse(t *testing.T) {
	for _, c := range []struct {
		t     graph.Type
		shape []int
		want  string
	}{
		{graph.TypeOf(graph.Float64, 3), nil, ""},
		{graph.TypeOf(graph.Float64, 3), []int{2}, ""},
		{graph.TypeOf(graph.Float64, 1, 3), []int{3}, ""},
		{graph.TypeOf(graph.Float64, 3), []int{2, 3}, "(i / 1 % 3) * 1"},
		{graph.TypeOf(graph.Float64, 2, 1), []int{2, 3}, "(i / 3 % 2) * 1"},
	} {
		if got := ops.BroadcastIndexC(c.t, c.shape); got != c.want {
			t.Errorf("BroadcastIndexC(%v, %v) = %q, want %q", c.t, c.shape, got, c.want)
		}
	}
	_, err := ops.ElementwiseC(ops.MatMulOp{}, nil, true)
	if want := "ElementwiseC: MatMul has no C expression"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}
