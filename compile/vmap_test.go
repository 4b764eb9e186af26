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
	"github.com/nabla-go/nabla/gradcheck"
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
	if graph.IsInteger(a.Dtype()) {
		return slices.Equal(graph.Int64s(a), graph.Int64s(b))
	}
	x, y := graph.Float64s(a), graph.Float64s(b)
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			return false
		}
	}
	return true
}

// closeDense reports whether a and b have the same shape and elements
// within tol·max(1, |b|).
func closeDense(a, b *tensor.Dense, tol float64) bool {
	if !slices.Equal(a.Shape(), b.Shape()) {
		return false
	}
	x, y := graph.Float64s(a), graph.Float64s(b)
	for i := range x {
		if !(math.Abs(x[i]-y[i]) <= tol*max(1, math.Abs(y[i]))) {
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
	var d *tensor.Dense
	var err error
	if graph.IsInteger(x.Dtype()) { // exactly, an int64 beyond 2⁵³ too
		d, err = graph.FromInt64s(x.Dtype(), graph.Int64s(x)[b*n:(b+1)*n], shape...)
	} else {
		d, err = graph.FromFloat64s(x.Dtype(), graph.Float64s(x)[b*n:(b+1)*n], shape...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Vmap of every row of the op table, and of its loops and branches,
// batching each float input in turn and then every one at once, equals
// vmapBatch separate runs of the row, bit for bit.
func TestVmapOpTable(t *testing.T) {
	for _, c := range slices.Concat(optable.Table(), optable.ScanTable(), optable.CondTable(), optable.WhileTable(), optable.UntilTable()) {
		var floats []int
		for j, x := range c.Inputs {
			if graph.IsFloat(x.Dtype()) {
				floats = append(floats, j)
				t.Run(fmt.Sprintf("%s/input %d", c.Name(), j), func(t *testing.T) { checkVmapRow(t, c, j) })
			}
		}
		if len(floats) > 1 {
			t.Run(c.Name()+"/every float input", func(t *testing.T) { checkVmapRow(t, c, floats...) })
		}
	}
}

// checkVmapRow batches the inputs of row c listed in batched, each with
// its examples along axis 0, the others shared, and checks the result
// against separate runs bit for bit.
func checkVmapRow(t *testing.T, c optable.Case, batched ...int) {
	checkVmapRowWithin(t, c, 0, batched...)
}

// checkVmapRowWithin is checkVmapRow to a tolerance: |got − want| ≤
// tol·max(1, |want|), or bit for bit when tol is 0.
func checkVmapRowWithin(t *testing.T, c optable.Case, tol float64, batched ...int) {
	exs := make([][]*tensor.Dense, len(c.Inputs))
	stacked := make([]*tensor.Dense, len(c.Inputs))
	for _, j := range batched {
		exs[j], stacked[j] = examplesOf(c.Inputs[j])
	}

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
		for _, j := range batched {
			feeds[in[j]] = exs[j][b]
		}
		want[b] = runVmapped(t, []*graph.Node{y}, feeds)[0]
	}

	gb := graph.New()
	bin := make([]*graph.Node, len(c.Inputs))
	axes := make([]int, len(c.Inputs))
	bfeeds := vm.Feeds{}
	for i, x := range c.Inputs {
		if stacked[i] != nil {
			x = stacked[i]
		} else {
			axes[i] = compile.NotBatched
		}
		bin[i] = gb.Input(fmt.Sprint("x", i), x.Dtype(), x.Shape()...)
		bfeeds[bin[i]] = x
	}
	ys, err := compile.Vmap(func(ex []*graph.Node) []*graph.Node { return []*graph.Node{c.Build(ex)} }, bin, axes, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := runVmapped(t, ys, bfeeds)[0]
	for b := range want {
		r := rowOf(t, got, b)
		if tol == 0 && sameBitsDense(r, want[b]) || tol > 0 && closeDense(r, want[b], tol) {
			continue
		}
		t.Errorf("example %d: got %v, want %v (tolerance %g)", b, graph.Float64s(r), graph.Float64s(want[b]), tol)
	}
}

// Mistakes in Vmap's arguments are errors naming them and the caller's
// file:line, never panics.
func TestVmapErrors(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3, 2)
	y := g.Input("y", graph.Float64, 4, 2)
	w := g.Input("w", graph.Float64, 2)
	r8 := g.Input("r8", graph.Float64, 1, 1, 1, 1, 1, 1, 2, 2)
	id := func(ex []*graph.Node) []*graph.Node { return ex[:1] }
	second := func(ex []*graph.Node) []*graph.Node { return ex[1:] }
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
		{"an output of rank 8 stacked", func() error {
			_, err := compile.Vmap(second, []*graph.Node{x, r8}, []int{0, compile.NotBatched}, nil)
			return err
		}, "output 0, float64(1,1,1,1,1,1,2,2), stacked over a batch of 3, would have rank 9, above the supported 8"},
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
		}, "f returns nil as output 0"},
		{"f returns a node of another graph", func() error {
			_, err := compile.Vmap(func([]*graph.Node) []*graph.Node { return []*graph.Node{other} }, []*graph.Node{x}, nil, nil)
			return err
		}, "f returns input \"z\" #0 float64(2), a node of an unrelated graph"},
		{"f builds a bad node", func() error {
			_, err := compile.Vmap(func(ex []*graph.Node) []*graph.Node { return []*graph.Node{ops.MatMul(ex[0], ex[0])} }, []*graph.Node{x}, nil, nil)
			return err
		}, "f's output 0 is poisoned: nabla: MatMul: shapes (2) and (2): ranks 1 and 1 are not supported"},
		{"a batching rule panics", func() error {
			_, err := compile.Vmap(func(ex []*graph.Node) []*graph.Node { return []*graph.Node{graph.Apply(panickyShiftOp{}, ex[0])} }, []*graph.Node{x}, nil, nil)
			return err
		}, "batching panicked: no rule today"},
		{"a batching rule builds in another graph", func() error {
			_, err := compile.Vmap(func(ex []*graph.Node) []*graph.Node { return []*graph.Node{graph.Apply(strayShiftOp{}, ex[0])} }, []*graph.Node{x}, nil, nil)
			return err
		}, "batching rule of Shift at vmap_test.go:"},
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
	// Not stacked, an output of rank 8 is the value f returned.
	if out, err := compile.Vmap(second, []*graph.Node{x, r8}, []int{0, compile.NotBatched}, []int{compile.NotBatched}); err != nil || out[0] != r8 {
		t.Errorf("an output of rank 8 not batched: got %v, %v; want r8", out, err)
	}
}

// The op table's rows of ops with batching rules, and its Scans, Conds,
// While loops and Scans with Until, batch without a loop over the
// examples (a batched predicate included), but for the inputs whose rule
// declines: ScatterAdd's indices; and CrossEntropy's logits with shared
// integer labels, which would need BroadcastTo, which takes floats.
func TestVmapRulesDoNotLoop(t *testing.T) {
	ruled := []string{"Add", "Sub", "Mul", "Div", "Pow", "Maximum", "Minimum", "Greater", "Less", "Equal",
		"Neg", "Exp", "Log", "Tanh", "Sigmoid", "ReLU", "GELU", "SiLU", "Where", "Identity", "StopGradient", "Cast",
		"MatMul", "MatMulT", "MatMulAdd", "Sum", "SumKeepDims", "Mean", "Max", "LogSumExp", "Softmax", "LogSoftmax",
		"Reshape", "Transpose", "BroadcastTo", "SumTo", "Slice", "Pad", "Concat", "Flatten",
		"Cholesky", "CholeskySolve", "TriangularSolve", "Solve", "Inverse", "Det", "SlogDet", "LogDet", "MatrixExp",
		"Trace", "SVD", "QR", "Eigh", "Tril", "Triu", "Diagonal", "DiagEmbed", "Eye",
		"BatchNorm", "ChannelAffine", "ChannelSum", "ChannelMean", "ChannelVar", "Scan", "Cond", "While", "Conv2D", "Conv1D", "MaxPool2D", "AvgPool2D", "GlobalAvgPool2D", "CrossEntropy",
		"CrossEntropyOneHot", "OneHot", "Gather", "ScatterAdd"}
	declines := map[string][]int{ // row: the inputs whose rule declines
		"CrossEntropy/int64 labels": {0},
	}
	for _, c := range slices.Concat(optable.Table(), optable.ScanTable(), optable.CondTable(), optable.WhileTable(), optable.UntilTable()) {
		if !slices.Contains(ruled, c.Builder) {
			continue
		}
		for j, x := range c.Inputs {
			switch {
			case !graph.IsFloat(x.Dtype()), slices.Contains(declines[c.Name()], j),
				j == 1 && c.Builder == "ScatterAdd": // the indices
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

// vmapped is Vmap that panics on an error, for functions that gradcheck
// builds (it reports a panic as an error).
func vmapped(f func([]*graph.Node) []*graph.Node, xs []*graph.Node, inAxes []int) *graph.Node {
	ys, err := compile.Vmap(f, xs, inAxes, nil)
	if err != nil {
		panic(err)
	}
	return ys[0]
}

// perExample is a function of one example x (2,) and a shared W (2,2)
// mixing batched ops (matrix products, tanh, a determinant, a channel
// mean) with one that is looped over the batch (a user's op without a
// batching rule).
func perExample(ex []*graph.Node) []*graph.Node {
	x, w := ex[0], ex[1]
	h := ops.Tanh(ops.MatMul(ops.Reshape(graph.Apply(shiftOp{0.5}, x), 1, 2), w)) // (1,2)
	m := ops.Add(ops.MatMulT(h, h, true, false), ops.Eye(x.Graph(), x.DType(), 2))
	return []*graph.Node{ops.Add(ops.Sum(ops.ChannelMean(ops.Mul(h, h))), ops.Det(m))}
}

// The derivatives of a Vmapped function, to second order and to third,
// match finite differences, with respect to the batch and to a shared
// input, through batched and looped ops alike.
func TestVmapGradGrad(t *testing.T) {
	f := func(in []*graph.Node) *graph.Node {
		return vmapped(perExample, in, []int{0, compile.NotBatched})
	}
	inputs := []*tensor.Dense{
		optable.TensorOf([]int{3, 2}, 0.3, -0.7, 0.9, 0.4, -0.5, 0.8),
		optable.TensorOf([]int{2, 2}, 0.6, -0.4, 0.2, 0.7),
	}
	stop := compile.LoopedOps()
	if err := gradcheck.GradGradCheck(f, inputs, gradcheck.Options{}); err != nil {
		t.Error(err)
	}
	if looped := stop(); !slices.Contains(looped, "Shift") || slices.Contains(looped, "Det") {
		t.Errorf("looped %v, want Shift and not Det (the test covers both)", looped)
	}
	third := func(in []*graph.Node) *graph.Node {
		y := f(in)
		g, err := compile.Grad(ops.Sum(ops.Mul(y, y)), in[1])
		if err != nil {
			panic(err)
		}
		return g[0]
	}
	if err := gradcheck.GradGradCheck(third, inputs, gradcheck.Options{}); err != nil {
		t.Errorf("third order: %v", err)
	}
}

// Examples along a middle axis, stacked along another, and outputs that
// do not depend on the batch, returned once or broadcast, against
// values computed by hand.
func TestVmapAxes(t *testing.T) {
	const B = 3
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, B, 4) // examples along axis 1
	w := g.Input("w", graph.Float64, 4)
	ys, err := compile.Vmap(func(ex []*graph.Node) []*graph.Node {
		x, w := ex[0], ex[1] // (2,4) and (4,)
		return []*graph.Node{ops.Sum(ops.Tanh(ops.Mul(x, w)), 0), ops.Sum(w), ops.Scale(w, 2)}
	}, []*graph.Node{x, w}, []int{1, compile.NotBatched}, []int{-1, compile.NotBatched, 0})
	if err != nil {
		t.Fatal(err)
	}
	xv := make([]float64, 2*B*4)
	for i := range xv {
		xv[i] = float64(i%7)/5 - 0.6
	}
	wv := []float64{0.5, -1.5, 2, 0.25}
	xd, _ := graph.FromFloat64s(graph.Float64, xv, 2, B, 4)
	wd, _ := graph.FromFloat64s(graph.Float64, wv, 4)
	got := runVmapped(t, ys, vm.Feeds{x: xd, w: wd})
	if s := got[0].Shape(); !slices.Equal(s, []int{4, B}) {
		t.Fatalf("output 0 has shape %v, want (4,%d)", s, B)
	}
	sums := graph.Float64s(got[0])
	for j := range 4 {
		for b := range B {
			want := math.Tanh(xv[(0*B+b)*4+j]*wv[j]) + math.Tanh(xv[(1*B+b)*4+j]*wv[j])
			if d := math.Abs(sums[j*B+b] - want); d > 1e-15 {
				t.Errorf("output 0 [%d,%d]: got %v, want %v", j, b, sums[j*B+b], want)
			}
		}
	}
	if v := graph.Float64s(got[1]); len(v) != 1 || got[1].Shape().TotalSize() != 1 || v[0] != 1.25 {
		t.Errorf("output 1: got %v of shape %v, want the scalar 1.25", v, got[1].Shape())
	}
	if s := got[2].Shape(); !slices.Equal(s, []int{B, 4}) {
		t.Fatalf("output 2 has shape %v, want (%d,4)", s, B)
	}
	for i, v := range graph.Float64s(got[2]) {
		if want := 2 * wv[i%4]; v != want {
			t.Errorf("output 2 [%d]: got %v, want %v", i, v, want)
		}
	}
}

// shiftOp is a user's elementwise op, x + c, without a batching rule.
type shiftOp struct{ c float64 }

// Backward passes the gradient on: ∂(x + c)/∂x is 1.
func (shiftOp) Backward(_ *graph.GradContext, g *graph.Node) []*graph.Node { return []*graph.Node{g} }

func (shiftOp) Name() string                             { return "Shift" }
func (shiftOp) Type(in []graph.Type) (graph.Type, error) { return in[0], nil }
func (o shiftOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	x, y := in[0].Float64s(), out.Float64s()
	for i := range y {
		y[i] = x[i] + o.c
	}
	return nil
}

// batchedShiftOp is shiftOp with a batching rule, which counts its calls.
type batchedShiftOp struct {
	shiftOp
	calls *int
}

func (o batchedShiftOp) Batch(c *graph.BatchContext) *graph.Node {
	*o.calls++
	return graph.Apply(o, c.Input(0))
}

// panickyShiftOp is shiftOp with a batching rule that panics.
type panickyShiftOp struct{ shiftOp }

func (panickyShiftOp) Batch(*graph.BatchContext) *graph.Node { panic("no rule today") }

// strayShiftOp is shiftOp with a batching rule that builds in a graph of
// its own.
type strayShiftOp struct{ shiftOp }

func (strayShiftOp) Batch(c *graph.BatchContext) *graph.Node {
	return graph.New().Input("stray", graph.Float64, c.Shape(c.Example().Shape())...)
}

// A user's op is batched by its rule where it has one (graph.Batchable),
// and looped over the batch where it has none; both equal the op applied
// to each example.
func TestVmapCustomOp(t *testing.T) {
	calls := 0
	for _, c := range []struct {
		op     graph.Op
		looped bool
	}{{shiftOp{0.5}, true}, {batchedShiftOp{shiftOp{0.5}, &calls}, false}} {
		g := graph.New()
		x := g.Input("x", graph.Float64, 3, 2)
		stop := compile.LoopedOps()
		ys, err := compile.Vmap(func(ex []*graph.Node) []*graph.Node {
			return []*graph.Node{graph.Apply(c.op, ops.Square(ex[0]))}
		}, []*graph.Node{x}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if looped := slices.Contains(stop(), "Shift"); looped != c.looped {
			t.Errorf("%T: looped %v, want %v", c.op, looped, c.looped)
		}
		xd := optable.TensorOf([]int{3, 2}, 1, 2, 3, 4, 5, 6)
		for i, v := range graph.Float64s(runVmapped(t, ys, vm.Feeds{x: xd})[0]) {
			if want := float64((i+1)*(i+1)) + 0.5; v != want {
				t.Errorf("%T: element %d: got %v, want %v", c.op, i, v, want)
			}
		}
	}
	if calls != 1 {
		t.Errorf("the batching rule was called %d times, want 1", calls)
	}
}

// Vmap nests: a Vmap over the rows of x of a Vmap over the rows of y
// gives every pair's dot product, as a matrix product would. The inner
// Vmap is given the outer's example as a shared input: it is a node of
// the outer's traced graph, which the inner's must be nested in.
func TestVmapNested(t *testing.T) {
	g := graph.New()
	x, y := g.Input("x", graph.Float64, 2, 3), g.Input("y", graph.Float64, 4, 3)
	ys, err := compile.Vmap(func(xi []*graph.Node) []*graph.Node {
		inner, err := compile.Vmap(func(in []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Sum(ops.Mul(in[1], in[0]))}
		}, []*graph.Node{y, xi[0]}, []int{0, compile.NotBatched}, nil)
		if err != nil {
			panic(err)
		}
		return inner
	}, []*graph.Node{x}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	xv, yv := []float64{1, 2, 3, -1, 0.5, 2}, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1}
	xd, _ := graph.FromFloat64s(graph.Float64, xv, 2, 3)
	yd, _ := graph.FromFloat64s(graph.Float64, yv, 4, 3)
	got := graph.Float64s(runVmapped(t, ys, vm.Feeds{x: xd, y: yd})[0])
	for i := range 2 {
		for j := range 4 {
			want := 0.0
			for k := range 3 {
				want += xv[i*3+k] * yv[j*3+k]
			}
			if got[i*4+j] != want {
				t.Errorf("[%d,%d]: got %v, want %v", i, j, got[i*4+j], want)
			}
		}
	}
}

// Vmap works inside a Scan body, on the step's slice, and f may return
// its example as it is (with another out axis, a transpose).
func TestVmapInScan(t *testing.T) {
	g := graph.New()
	xs := g.Input("xs", graph.Float64, 2, 3, 4) // two steps of (3,4)
	w := g.Input("w", graph.Float64, 4)
	_, ys := ops.Scan(func(_, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		out, err := compile.Vmap(func(ex []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Sum(ops.Mul(ex[0], w)), ex[0]}
		}, x, nil, []int{0, 1})
		if err != nil {
			panic(err)
		}
		return nil, out
	}, nil, []*graph.Node{xs})
	xv := make([]float64, 24)
	for i := range xv {
		xv[i] = float64(i) / 4
	}
	wv := []float64{1, -2, 0.5, 3}
	xd, _ := graph.FromFloat64s(graph.Float64, xv, 2, 3, 4)
	wd, _ := graph.FromFloat64s(graph.Float64, wv, 4)
	got := runVmapped(t, ys, vm.Feeds{xs: xd, w: wd})
	dots, moved := graph.Float64s(got[0]), graph.Float64s(got[1])
	if s := got[1].Shape(); !slices.Equal(s, []int{2, 4, 3}) {
		t.Fatalf("output 1 has shape %v, want (2,4,3)", s)
	}
	for s := range 2 {
		for b := range 3 {
			want := 0.0
			for j := range 4 {
				want += xv[(s*3+b)*4+j] * wv[j]
				if got, want := moved[(s*4+j)*3+b], xv[(s*3+b)*4+j]; got != want {
					t.Errorf("output 1 [%d,%d,%d]: got %v, want %v", s, j, b, got, want)
				}
			}
			if dots[s*3+b] != want {
				t.Errorf("output 0 [%d,%d]: got %v, want %v", s, b, dots[s*3+b], want)
			}
		}
	}
}

// A Scan with an integer carry that does not depend on the batch, which
// its rule broadcasts, is batched, not looped over the batch; a user's
// op without a batching rule in its body is looped over the batch inside
// the batched body. Both equal separate runs.
func TestVmapScanIntegerCarry(t *testing.T) {
	for _, shift := range []bool{true, false} {
		c := optable.Case{Builder: "Scan", Variant: "integer carry", Inputs: []*tensor.Dense{
			optable.TensorOf([]int{2}, 0.5, -1), optable.TensorOf([]int{3, 2}, 1, 2, 3, 4, 5, 6)},
			Build: func(in []*graph.Node) *graph.Node {
				count := in[0].Graph().Const(graph.NewDense(graph.Int64))
				final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					h := ops.Tanh(ops.Add(c[0], x[0]))
					if shift {
						h = graph.Apply(shiftOp{0.5}, h)
					}
					return []*graph.Node{h, c[1]}, nil
				}, []*graph.Node{in[0], count}, []*graph.Node{in[1]})
				return final[0]
			}}
		stop := compile.LoopedOps()
		checkVmapRow(t, c, 0)
		want := []string(nil)
		if shift {
			want = []string{"Shift"}
		}
		if looped := stop(); !slices.Equal(looped, want) {
			t.Errorf("with a Shift %v: looped %v, want %v", shift, looped, want)
		}
	}
}

// The derivatives of a Vmapped loop (the Scan batched by its rule) match
// finite differences to second order, with respect to the batch and to a
// shared weight the body reads.
func TestVmapScanGradGrad(t *testing.T) {
	f := func(in []*graph.Node) *graph.Node {
		return vmapped(func(ex []*graph.Node) []*graph.Node {
			xs, w := ex[0], ex[1] // (3,2) steps and (2,2)
			_, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				h := ops.Tanh(ops.Add(ops.MatMul(c[0], w), x[0]))
				return []*graph.Node{h}, []*graph.Node{h}
			}, []*graph.Node{ops.Reshape(ops.Slice(xs, 0, 0, 1), 1, 2)}, []*graph.Node{ops.Reshape(xs, 3, 1, 2)})
			return []*graph.Node{ops.Sum(ys[0])}
		}, in, []int{0, compile.NotBatched})
	}
	inputs := []*tensor.Dense{
		optable.TensorOf([]int{2, 3, 2}, 0.3, -0.7, 0.9, 0.4, -0.5, 0.8, 0.1, 0.2, -0.3, 0.6, -0.9, 0.5),
		optable.TensorOf([]int{2, 2}, 0.6, -0.4, 0.2, 0.7),
	}
	stop := compile.LoopedOps()
	if err := gradcheck.GradGradCheck(f, inputs, gradcheck.Options{}); err != nil {
		t.Error(err)
	}
	if looped := stop(); slices.Contains(looped, "Scan") {
		t.Errorf("looped %v: the Scan should be batched by its rule", looped)
	}
}

// The derivatives of a Vmapped Cond with a shared predicate (batched by
// its rule) match finite differences to second order, with either branch
// taken.
func TestVmapCondGradGrad(t *testing.T) {
	for _, p := range []float64{1, 0} {
		f := func(in []*graph.Node) *graph.Node {
			return vmapped(func(ex []*graph.Node) []*graph.Node {
				x, w, pred := ex[0], ex[1], ex[2]
				return ops.Cond(pred, func(o []*graph.Node) []*graph.Node {
					return []*graph.Node{ops.Sum(ops.Tanh(ops.Mul(o[0], w)))}
				}, func(o []*graph.Node) []*graph.Node {
					return []*graph.Node{ops.Sum(ops.Mul(ops.Sin(o[0]), ops.Exp(w)))}
				}, []*graph.Node{x})
			}, in, []int{0, compile.NotBatched, compile.NotBatched})
		}
		inputs := []*tensor.Dense{
			optable.TensorOf([]int{3, 2}, 0.3, -0.7, 0.9, 0.4, -0.5, 0.8),
			optable.TensorOf([]int{2}, 0.6, -0.4),
			optable.TensorOf(nil, p),
		}
		stop := compile.LoopedOps()
		if err := gradcheck.GradGradCheck(f, inputs, gradcheck.Options{Inputs: []int{0, 1}}); err != nil {
			t.Errorf("predicate %v: %v", p, err)
		}
		if looped := stop(); slices.Contains(looped, "Cond") {
			t.Errorf("predicate %v: looped %v: the Cond should be batched by its rule", p, looped)
		}
	}
}

// The gradient of a loop, Vmapped (per-example gradients of an RNN): the
// gradient's Scan, which sums the weight's gradient over the steps, is
// batched by its rule too, and the result equals separate runs to
// rounding: the step's c·W + x is one product accumulating onto x
// (MatMulAdd) in a one-example run, the batch's product then a sum.
func TestVmapGradientOfScan(t *testing.T) {
	c := optable.Case{Builder: "Scan", Variant: "gradient of a tanh RNN", Inputs: []*tensor.Dense{
		optable.TensorOf([]int{4, 1, 2}, 0.3, -0.7, 0.9, 0.4, -0.5, 0.8, 0.1, 0.2),
		optable.TensorOf([]int{2, 2}, 0.6, -0.4, 0.2, 0.7)},
		Build: func(in []*graph.Node) *graph.Node {
			xs, w := in[0], in[1]
			final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{ops.Tanh(ops.Add(ops.MatMul(c[0], w), x[0]))}, nil
			}, []*graph.Node{ops.Reshape(ops.Slice(xs, 0, 0, 1), 1, 2)}, []*graph.Node{xs})
			grad, err := compile.Grad(ops.Sum(ops.Square(final[0])), w)
			if err != nil {
				panic(err)
			}
			return grad[0]
		}}
	stop := compile.LoopedOps()
	checkVmapRowWithin(t, c, 1e-15, 0)
	if looped := stop(); len(looped) > 0 {
		t.Errorf("looped %v", looped)
	}
}

// Per-example gradients of a convolution's filter, Vmapped: the filter's
// gradient (Conv2DWeightGrad) batches as one of B times the groups, and
// equals separate runs bit for bit.
func TestVmapGradientOfConv(t *testing.T) {
	v := optable.NewValues(3)
	for _, groups := range []int{1, 2} {
		c := optable.Case{Builder: "Conv2D", Variant: fmt.Sprintf("filter gradient, %d groups", groups),
			Inputs: []*tensor.Dense{v.Signed(2, 2, 5, 5), v.Signed(4, 2/groups, 3, 3)},
			Build: func(in []*graph.Node) *graph.Node {
				y := ops.Conv2D(in[0], in[1], ops.ConvOptions{Padding: []int{1}, Groups: groups})
				grad, err := compile.Grad(ops.Sum(ops.Square(y)), in[1])
				if err != nil {
					panic(err)
				}
				return grad[0]
			}}
		stop := compile.LoopedOps()
		checkVmapRow(t, c, 0)
		checkVmapRow(t, c, 1)
		checkVmapRow(t, c, 0, 1)
		if looped := stop(); len(looped) > 0 {
			t.Errorf("%s: looped %v", c.Name(), looped)
		}
	}
}
