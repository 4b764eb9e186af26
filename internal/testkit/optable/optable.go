// Package optable is the table of every built-in op applied to sample
// inputs: gradcheck's tests check each row's derivatives to third order,
// the cuda package's conformance test runs each row on a GPU against the
// CPU.
package optable

import (
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Case is one row of the built-in op table: a builder of package ops
// applied to sample inputs. Every builder has at least one row (see
// TestEveryBuilderHasARow); every row goes through CheckOp, so to first
// and second order, and through GradGradCheck of its gradient, so to third
// order, with the op taken from a node the builder built, so
// builders with non-tensor parameters (axes, shapes, constants) are
// checked through CheckOp too.
type Case struct {
	Builder string // the ops builder the row covers
	Variant string // what this row's inputs exercise
	Build   func(in []*graph.Node) *graph.Node
	Inputs  []*tensor.Dense
	// Checked lists the inputs whose derivatives are checked (nil: all).
	Checked []int
	// NoGrad says why the op gives no gradient for the inputs in
	// noGradInputs; the test checks that its Backward returns nil for
	// them, rather than skipping them.
	NoGrad       string
	NoGradInputs []int
	// StopsGradient marks StopGradient, whose missing gradient finite
	// differences do see: CheckOp must report it.
	StopsGradient bool
	// Composite marks builders made of other ops (Conv1D is Conv2D
	// between reshapes): the row checks the builder as a function.
	Composite bool
	// Eps is the finite-difference step (0: the default).
	Eps float64
}

// Name is the row's builder and variant, as subtests name it.
func (c Case) Name() string { return c.Builder + "/" + c.Variant }

func unaryRow(name, variant string, f func(*graph.Node) *graph.Node, x *tensor.Dense) Case {
	return Case{Builder: name, Variant: variant, Build: func(in []*graph.Node) *graph.Node { return f(in[0]) },
		Inputs: []*tensor.Dense{x}}
}

func binaryRow(name, variant string, f func(a, b *graph.Node) *graph.Node, a, b *tensor.Dense) Case {
	return Case{Builder: name, Variant: variant, Build: func(in []*graph.Node) *graph.Node { return f(in[0], in[1]) },
		Inputs: []*tensor.Dense{a, b}}
}

func row(name, variant string, build func(in []*graph.Node) *graph.Node, inputs ...*tensor.Dense) Case {
	return Case{Builder: name, Variant: variant, Build: build, Inputs: inputs}
}

const maskNoGrad = "a mask is piecewise constant: its gradient is zero away from ties, so Backward returns none"

// Table is the table of every built-in op. Sample inputs stay away
// from kinks (0 for Abs, ReLU and Sign; ties for Maximum, Minimum and Max)
// and inside domains (positive for Log, Sqrt and Pow's base).
func Table() []Case {
	v := NewValues(1)
	var rows []Case

	// Elementwise binary ops, each with equal shapes, two-sided
	// broadcasting and a scalar operand.
	type shapes struct {
		variant string
		a, b    []int
	}
	layouts := []shapes{{"same", []int{2, 3}, []int{2, 3}}, {"broadcast", []int{2, 1}, []int{1, 3}}, {"scalar", nil, []int{2, 3}},
		{"rank 3 broadcast", []int{2, 1, 3}, []int{2, 1}}}
	binaries := []struct {
		name string
		f    func(a, b *graph.Node) *graph.Node
		a, b func(shape ...int) *tensor.Dense
	}{
		{"Add", ops.Add, v.Signed, v.Signed},
		{"Sub", ops.Sub, v.Signed, v.Signed},
		{"Mul", ops.Mul, v.Signed, v.Signed},
		{"Div", ops.Div, v.Signed, v.Signed},
		{"Pow", ops.Pow, v.Positive, v.Signed},
		{"Maximum", ops.Maximum, v.Signed, v.Signed},
		{"Minimum", ops.Minimum, v.Signed, v.Signed},
	}
	for _, b := range binaries {
		for _, l := range layouts {
			rows = append(rows, binaryRow(b.name, l.variant, b.f, b.a(l.a...), b.b(l.b...)))
		}
	}
	for _, m := range []struct {
		name string
		f    func(a, b *graph.Node) *graph.Node
	}{{"Greater", ops.Greater}, {"Less", ops.Less}, {"Equal", ops.Equal}} {
		for _, l := range layouts {
			r := binaryRow(m.name, l.variant, m.f, v.Signed(l.a...), v.Signed(l.b...))
			r.NoGrad, r.NoGradInputs = maskNoGrad, []int{0, 1}
			rows = append(rows, r)
		}
	}

	// Elementwise unary ops.
	unaries := []struct {
		name string
		f    func(*graph.Node) *graph.Node
		x    func(shape ...int) *tensor.Dense
	}{
		{"Neg", ops.Neg, v.Signed},
		{"Exp", ops.Exp, v.Signed},
		{"Log", ops.Log, v.Positive},
		{"Log1p", ops.Log1p, func(s ...int) *tensor.Dense { return v.Uniform(-0.5, 1.5, s...) }},
		{"Sqrt", ops.Sqrt, v.Positive},
		{"Square", ops.Square, v.Signed},
		{"Abs", ops.Abs, v.Signed},
		{"Sin", ops.Sin, v.Signed},
		{"Cos", ops.Cos, v.Signed},
		{"Tanh", ops.Tanh, v.Signed},
		{"Sigmoid", ops.Sigmoid, v.Signed},
		{"ReLU", ops.ReLU, v.Signed},
		{"Softplus", ops.Softplus, v.Signed},
		{"PowConst", func(x *graph.Node) *graph.Node { return ops.PowConst(x, 2.5) }, v.Positive},
		{"PowConst", func(x *graph.Node) *graph.Node { return ops.PowConst(x, -3) }, v.Signed},
		{"Scale", func(x *graph.Node) *graph.Node { return ops.Scale(x, -1.7) }, v.Signed},
		{"Erf", ops.Erf, v.Signed},
		{"GELU", func(x *graph.Node) *graph.Node { return ops.GELU(x, false) }, v.Signed},
		{"GELU", func(x *graph.Node) *graph.Node { return ops.GELU(x, true) }, v.Signed},
		{"SiLU", ops.SiLU, v.Signed},
	}
	for _, u := range unaries {
		rows = append(rows, unaryRow(u.name, "matrix", u.f, u.x(2, 3)), unaryRow(u.name, "scalar", u.f, u.x()))
	}
	sign := unaryRow("Sign", "matrix", ops.Sign, v.Signed(2, 3))
	sign.NoGrad, sign.NoGradInputs = "Sign is piecewise constant: its gradient is zero away from 0, so Backward returns none", []int{0}
	rows = append(rows, sign)

	where := row("Where", "broadcast", func(in []*graph.Node) *graph.Node { return ops.Where(in[0], in[1], in[2]) },
		TensorOf([]int{2, 3}, 1, 0, 0, 1, 1, 0), v.Signed(2, 3), v.Signed(3))
	where.Checked = []int{1, 2}
	where.NoGrad, where.NoGradInputs = "the condition only selects: it gets no gradient (and finite differences of a 0/1 mask jump)", []int{0}
	whereScalar := row("Where", "scalar branch", where.Build, TensorOf([]int{3}, 0, 1, 1), v.Signed(), v.Signed(3))
	whereScalar.Checked, whereScalar.NoGrad, whereScalar.NoGradInputs = where.Checked, where.NoGrad, where.NoGradInputs
	rows = append(rows, where, whereScalar)

	rows = append(rows, row("Identity", "matrix", func(in []*graph.Node) *graph.Node { return ops.Identity(in[0]) }, v.Signed(2, 3)))
	stop := row("StopGradient", "matrix", func(in []*graph.Node) *graph.Node { return ops.StopGradient(in[0]) }, v.Signed(2, 3))
	stop.NoGrad, stop.NoGradInputs, stop.StopsGradient = "StopGradient blocks the gradient on purpose", []int{0}, true
	rows = append(rows, stop)

	// Linear algebra: plain, batched, a batch times a shared matrix (both
	// ways) and every transpose flag.
	matmul := func(in []*graph.Node) *graph.Node { return ops.MatMul(in[0], in[1]) }
	matmulT := func(ta, tb bool) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return ops.MatMulT(in[0], in[1], ta, tb) }
	}
	rows = append(rows,
		row("MatMul", "matrix", matmul, v.Signed(2, 3), v.Signed(3, 4)),
		row("MatMul", "batched", matmul, v.Signed(2, 2, 3), v.Signed(2, 3, 2)),
		row("MatMul", "batch times matrix", matmul, v.Signed(2, 2, 3), v.Signed(3, 2)),
		row("MatMul", "matrix times batch", matmul, v.Signed(2, 3), v.Signed(2, 3, 2)),
		row("MatMulT", "transA", matmulT(true, false), v.Signed(3, 2), v.Signed(3, 4)),
		row("MatMulT", "transB", matmulT(false, true), v.Signed(2, 3), v.Signed(4, 3)),
		row("MatMulT", "both", matmulT(true, true), v.Signed(3, 2), v.Signed(4, 3)),
		row("MatMulT", "batched transA", matmulT(true, false), v.Signed(2, 3, 2), v.Signed(2, 3, 4)),
		row("MatMulT", "batched transB", matmulT(false, true), v.Signed(2, 2, 3), v.Signed(2, 4, 3)),
		row("MatMulT", "batched both", matmulT(true, true), v.Signed(2, 3, 2), v.Signed(2, 4, 3)),
		row("MatMulT", "batch times matrix transB", matmulT(false, true), v.Signed(2, 2, 3), v.Signed(4, 3)),
		row("MatMulT", "batch times matrix transA", matmulT(true, false), v.Signed(2, 3, 2), v.Signed(3, 2)),
		row("MatMulT", "batch times matrix both", matmulT(true, true), v.Signed(2, 3, 2), v.Signed(4, 3)),
		row("MatMulT", "matrix times batch transA", matmulT(true, false), v.Signed(3, 2), v.Signed(2, 3, 4)),
		row("MatMulT", "matrix times batch transB", matmulT(false, true), v.Signed(2, 3), v.Signed(2, 4, 3)),
		row("MatMulT", "matrix times batch both", matmulT(true, true), v.Signed(3, 2), v.Signed(2, 4, 3)),
	)
	matmulAdd := func(ta, tb bool) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return ops.MatMulAdd(in[0], in[1], in[2], ta, tb) }
	}
	rows = append(rows,
		row("MatMulAdd", "matrix", matmulAdd(false, false), v.Signed(2, 3), v.Signed(3, 4), v.Signed(2, 4)),
		row("MatMulAdd", "broadcast addend", matmulAdd(false, true), v.Signed(2, 3), v.Signed(4, 3), v.Signed(4)),
		row("MatMulAdd", "batched transA", matmulAdd(true, false), v.Signed(2, 3, 2), v.Signed(2, 3, 4), v.Signed(2, 1, 4)),
	)

	// Convolutions: their gradients are the family's other members, so
	// the second- and third-order checks cover those too.
	conv := func(f func(x, w *graph.Node, o ops.ConvOptions) *graph.Node, o ops.ConvOptions) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return f(in[0], in[1], o) }
	}
	rows = append(rows,
		row("Conv2D", "plain", conv(ops.Conv2D, ops.ConvOptions{}), v.Signed(1, 2, 4, 3), v.Signed(2, 2, 2, 2)),
		row("Conv2D", "stride padding dilation", conv(ops.Conv2D, ops.ConvOptions{Stride: []int{2, 1}, Padding: []int{1, 0, 1, 1}, Dilation: []int{1, 2}}),
			v.Signed(2, 1, 5, 4), v.Signed(2, 1, 2, 2)),
		row("Conv2D", "groups", conv(ops.Conv2D, ops.ConvOptions{Groups: 2, Padding: []int{1}}), v.Signed(1, 4, 3, 3), v.Signed(2, 2, 2, 2)),
		row("Conv2D", "same", conv(ops.Conv2D, ops.ConvOptions{Same: true}), v.Signed(1, 1, 3, 4), v.Signed(1, 1, 2, 3)),
		row("Conv2D", "1x1", conv(ops.Conv2D, ops.ConvOptions{}), v.Signed(2, 3, 2, 2), v.Signed(2, 3, 1, 1)),
		row("ConvTranspose2D", "stride 2", conv(ops.ConvTranspose2D, ops.ConvOptions{Stride: []int{2}, Padding: []int{1}, OutputPadding: []int{1}}),
			v.Signed(1, 2, 2, 3), v.Signed(2, 1, 3, 2)),
		row("ConvTranspose2D", "groups", conv(ops.ConvTranspose2D, ops.ConvOptions{Groups: 2}), v.Signed(1, 2, 2, 2), v.Signed(2, 2, 2, 1)),
	)
	conv1d := row("Conv1D", "stride padding", conv(ops.Conv1D, ops.ConvOptions{Stride: []int{2}, Padding: []int{1, 0}}), v.Signed(2, 2, 5), v.Signed(3, 2, 2))
	conv1d.Composite = true
	rows = append(rows, conv1d)

	// Pooling. Max pooling's gradients select by the argmax, which the
	// sample inputs (continuous draws) never tie. Squared, a pooling's
	// output gradient depends on x, so higher derivatives go through its
	// gradient's derivative with respect to that output gradient; the
	// penalty ‖∇ₓ⟨w, pool(x)²⟩‖² goes one further, through that
	// derivative's own: those rows check that MaxPool2DGrad and
	// MaxPool2DGather differentiate into each other, as AvgPool2D and its
	// spread do.
	pool := func(f func(x *graph.Node, o ops.PoolOptions) *graph.Node, o ops.PoolOptions) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return f(in[0], o) }
	}
	squared := func(f func(in []*graph.Node) *graph.Node) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return ops.Square(f(in)) }
	}
	maxOverlap := pool(ops.MaxPool2D, ops.PoolOptions{Kernel: []int{3}, Stride: []int{2}, Padding: []int{1}, CeilMode: true})
	avgOverlap := pool(ops.AvgPool2D, ops.PoolOptions{Kernel: []int{3}, Stride: []int{2}, Padding: []int{1}, CeilMode: true})
	maxSquared := row("MaxPool2D", "squared", squared(maxOverlap), v.Signed(1, 2, 4, 5))
	avgSquared := row("AvgPool2D", "squared", squared(avgOverlap), v.Signed(1, 2, 4, 5))
	maxPenalty := row("MaxPool2D", "gradient penalty", gradientPenalty(squared(maxOverlap)), v.Signed(1, 2, 4, 5))
	avgPenalty := row("AvgPool2D", "gradient penalty", gradientPenalty(squared(avgOverlap)), v.Signed(1, 2, 4, 5))
	global := row("GlobalAvgPool2D", "images", func(in []*graph.Node) *graph.Node { return ops.GlobalAvgPool2D(in[0]) }, v.Signed(2, 2, 3, 2))
	flatten := row("Flatten", "from axis 1", func(in []*graph.Node) *graph.Node { return ops.Flatten(in[0], 1) }, v.Signed(2, 2, 3))
	flattenLast := row("Flatten", "from axis -2", func(in []*graph.Node) *graph.Node { return ops.Flatten(in[0], -2) }, v.Signed(2, 2, 3))
	for _, r := range []*Case{&maxSquared, &avgSquared, &maxPenalty, &avgPenalty, &global, &flatten, &flattenLast} {
		r.Composite = true
	}
	rows = append(rows,
		row("MaxPool2D", "kernel 2", pool(ops.MaxPool2D, ops.PoolOptions{Kernel: []int{2}}), v.Signed(2, 1, 4, 4)),
		row("MaxPool2D", "kernel 3 stride 2 padding 1 ceil", maxOverlap, v.Signed(1, 2, 4, 5)),
		row("MaxPool2D", "dilation 2 stride 1", pool(ops.MaxPool2D, ops.PoolOptions{Kernel: []int{2, 3}, Stride: []int{1}, Dilation: []int{2, 1}}), v.Signed(1, 1, 5, 4)),
		row("AvgPool2D", "kernel 2", pool(ops.AvgPool2D, ops.PoolOptions{Kernel: []int{2}}), v.Signed(2, 1, 4, 4)),
		row("AvgPool2D", "kernel 3 stride 2 padding 1 ceil", avgOverlap, v.Signed(1, 2, 4, 5)),
		maxSquared, avgSquared, maxPenalty, avgPenalty, global, flatten, flattenLast,
	)

	// Per-channel ops. Their gradients are the family's other members
	// (dot products, covariances, two-term affine maps), which the
	// second- and third-order checks reach. ChannelVar is the covariance
	// of x with itself and BatchNorm takes x's statistics as inputs, so
	// they are checked as functions.
	channel := func(f func(x *graph.Node) *graph.Node) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return f(in[0]) }
	}
	batchNorm := func(eps float64) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return ops.BatchNorm(in[0], in[1], in[2], eps) }
	}
	variance := row("ChannelVar", "images", channel(ops.ChannelVar), v.Signed(2, 3, 2, 2))
	bnImages := row("BatchNorm", "images", batchNorm(1e-5), v.Signed(2, 3, 2, 2), v.Signed(3), v.Signed(3))
	bnRank2 := row("BatchNorm", "rank 2 eps 0.1", batchNorm(0.1), v.Signed(4, 3), v.Signed(3), v.Signed(3))
	bnRank3 := row("BatchNorm", "rank 3", batchNorm(1e-5), v.Signed(2, 2, 3), v.Signed(2), v.Signed(2))
	// Squared, the output gradient depends on x, so the second
	// derivative goes through the gradient's derivative with respect to
	// the output gradient too; the penalties go one order further.
	square := func(f func(in []*graph.Node) *graph.Node) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return ops.Square(f(in)) }
	}
	bnSquared := row("BatchNorm", "squared", square(batchNorm(1e-5)), v.Signed(2, 3, 2), v.Signed(3), v.Signed(3))
	bnPenalty := row("BatchNorm", "gradient penalty", gradientPenalty(square(batchNorm(1e-5))), v.Signed(2, 3, 2), v.Signed(3), v.Signed(3))
	varPenalty := row("ChannelVar", "gradient penalty", gradientPenalty(square(channel(ops.ChannelVar))), v.Signed(3, 2, 2))
	affinePenalty := row("ChannelAffine", "gradient penalty",
		gradientPenalty(square(func(in []*graph.Node) *graph.Node { return ops.ChannelAffine(in[0], in[1], in[2]) })),
		v.Signed(2, 3, 2), v.Signed(3), v.Signed(3))
	for _, r := range []*Case{&variance, &bnImages, &bnRank2, &bnRank3, &bnSquared, &bnPenalty, &varPenalty, &affinePenalty} {
		r.Composite = true
	}
	rows = append(rows, variance, bnImages, bnRank2, bnRank3, bnSquared, bnPenalty, varPenalty, affinePenalty,
		row("ChannelSum", "images", channel(ops.ChannelSum), v.Signed(2, 3, 2, 2)),
		row("ChannelMean", "rank 3", channel(ops.ChannelMean), v.Signed(2, 3, 2)),
		row("ChannelAffine", "scale and shift", func(in []*graph.Node) *graph.Node { return ops.ChannelAffine(in[0], in[1], in[2]) },
			v.Signed(2, 3, 2, 2), v.Signed(3), v.Signed(3)),
		row("ChannelAffine", "scale", func(in []*graph.Node) *graph.Node { return ops.ChannelAffine(in[0], in[1], nil) },
			v.Signed(3, 2), v.Signed(2)),
		row("ChannelAffine", "shift", func(in []*graph.Node) *graph.Node { return ops.ChannelAffine(in[0], nil, in[1]) },
			v.Signed(2, 3, 2), v.Signed(3)),
	)

	// Neural-network ops.
	for _, s := range []struct {
		name string
		f    func(*graph.Node, int) *graph.Node
	}{{"Softmax", ops.Softmax}, {"LogSoftmax", ops.LogSoftmax}} {
		rows = append(rows,
			row(s.name, "last axis", func(in []*graph.Node) *graph.Node { return s.f(in[0], 1) }, v.Signed(2, 3)),
			row(s.name, "axis 0", func(in []*graph.Node) *graph.Node { return s.f(in[0], 0) }, v.Signed(3, 2)),
			row(s.name, "middle axis of rank 3", func(in []*graph.Node) *graph.Node { return s.f(in[0], -2) }, v.Signed(2, 3, 2)),
		)
	}
	ce := row("CrossEntropy", "labels", func(in []*graph.Node) *graph.Node { return ops.CrossEntropy(in[0], in[1]) },
		v.Signed(3, 4), TensorOf([]int{3}, 0, 3, 1))
	ce.Checked, ce.NoGrad, ce.NoGradInputs = []int{0}, "labels are class indices: discrete, no gradient", []int{1}
	rows = append(rows, ce,
		row("CrossEntropyOneHot", "probabilities", func(in []*graph.Node) *graph.Node { return ops.CrossEntropyOneHot(in[0], in[1]) },
			v.Signed(3, 4), v.Uniform(0.1, 0.6, 3, 4)))
	ceInt := row("CrossEntropy", "int64 labels", func(in []*graph.Node) *graph.Node { return ops.CrossEntropy(in[0], in[1]) },
		v.Signed(3, 4), IntsOf(graph.Int64, []int{3}, 0, 3, 1))
	ceInt.NoGrad, ceInt.NoGradInputs = "labels are integers: no gradient", []int{1}
	rows = append(rows, ceInt)
	oneHotInt := row("OneHot", "int32 labels", func(in []*graph.Node) *graph.Node { return ops.OneHot(in[0], 3, graph.Float64) },
		IntsOf(graph.Int32, []int{2, 2}, 2, 0, 1, 2))
	oneHotInt.NoGrad, oneHotInt.NoGradInputs = "labels are integers: no gradient", []int{0}
	rows = append(rows, oneHotInt)
	oneHot := row("OneHot", "labels", func(in []*graph.Node) *graph.Node { return ops.OneHot(in[0], 3, in[0].DType()) }, TensorOf([]int{4}, 2, 0, 1, 2))
	oneHot.Checked = []int{} // the kernel alone: a label moved by ±Eps is no class index
	oneHot.NoGrad, oneHot.NoGradInputs = "labels are class indices: discrete, no gradient", []int{0}
	rows = append(rows, oneHot)

	// Row moves by index: the indices are held still, like labels.
	gather := func(in []*graph.Node) *graph.Node { return ops.Gather(in[0], in[1]) }
	scatterAdd := func(rows int) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return ops.ScatterAdd(in[0], in[1], rows) }
	}
	for _, r := range []Case{
		row("Gather", "repeated indices", gather, v.Signed(4, 3), TensorOf([]int{3}, 3, 0, 3)),
		row("Gather", "2-D indices into matrix rows", gather, v.Signed(3, 2, 2), TensorOf([]int{2, 2}, 1, 1, 0, 2)),
		row("Gather", "scalar index", gather, v.Signed(4, 3), TensorOf(nil, 2)),
		row("ScatterAdd", "repeated indices", scatterAdd(4), v.Signed(3, 2), TensorOf([]int{3}, 3, 0, 3)),
		row("ScatterAdd", "2-D indices", scatterAdd(3), v.Signed(2, 2, 3), TensorOf([]int{2, 2}, 1, 1, 0, 2)),
	} {
		r.Checked, r.NoGrad, r.NoGradInputs = []int{0}, "indices are row indices: discrete, no gradient", []int{1}
		rows = append(rows, r)
	}
	for _, r := range []Case{
		row("Gather", "int64 indices", gather, v.Signed(4, 3), IntsOf(graph.Int64, []int{2, 2}, 3, 0, 3, 1)),
		row("ScatterAdd", "int32 indices", scatterAdd(4), v.Signed(3, 2), IntsOf(graph.Int32, []int{3}, 3, 0, 3)),
	} {
		r.NoGrad, r.NoGradInputs = "indices are integers: no gradient", []int{1}
		rows = append(rows, r)
	}

	// Casts. Through float32 the inputs and the step are dyadic with few
	// bits, so that every value the finite differences visit is a float32
	// and the checks are exact.
	dyadic := TensorOf([]int{2, 3}, 0.75, -1.25, 0.5, 1.5, -0.375, 1)
	castF32 := row("Cast", "float64 through float32", func(in []*graph.Node) *graph.Node {
		return ops.Mul(ops.Cast(ops.Square(ops.Cast(in[0], graph.Float32)), graph.Float64), in[0])
	}, dyadic)
	castF32.Composite, castF32.Eps = true, 1.0/64
	rows = append(rows, castF32)

	// Reductions, over one axis, a negative one, several and all.
	reductions := []struct {
		name string
		f    func(*graph.Node, ...int) *graph.Node
	}{
		{"Sum", ops.Sum}, {"SumKeepDims", ops.SumKeepDims},
		{"Mean", ops.Mean}, {"MeanKeepDims", ops.MeanKeepDims},
		{"Max", ops.Max}, {"MaxKeepDims", ops.MaxKeepDims},
		{"LogSumExp", ops.LogSumExp}, {"LogSumExpKeepDims", ops.LogSumExpKeepDims},
	}
	for _, r := range reductions {
		for _, axes := range []struct {
			variant string
			axes    []int
		}{{"axis 1", []int{1}}, {"axis -1", []int{-1}}, {"axes 0 and 2", []int{0, 2}}, {"all", nil}} {
			rows = append(rows, row(r.name, axes.variant, func(in []*graph.Node) *graph.Node { return r.f(in[0], axes.axes...) }, v.Signed(2, 3, 2)))
		}
	}

	// Shape ops.
	rows = append(rows,
		row("Reshape", "matrix", func(in []*graph.Node) *graph.Node { return ops.Reshape(in[0], 3, 2) }, v.Signed(2, 3)),
		row("Reshape", "inferred dimension", func(in []*graph.Node) *graph.Node { return ops.Reshape(in[0], -1, 2) }, v.Signed(6)),
		row("Reshape", "to scalar", func(in []*graph.Node) *graph.Node { return ops.Reshape(in[0]) }, v.Signed(1, 1)),
		row("Transpose", "matrix", func(in []*graph.Node) *graph.Node { return ops.Transpose(in[0]) }, v.Signed(2, 3)),
		row("Transpose", "rank 3", func(in []*graph.Node) *graph.Node { return ops.Transpose(in[0], 1, 2, 0) }, v.Signed(2, 3, 2)),
		row("BroadcastTo", "new axis", func(in []*graph.Node) *graph.Node { return ops.BroadcastTo(in[0], 2, 3) }, v.Signed(3)),
		row("BroadcastTo", "size-1 axis", func(in []*graph.Node) *graph.Node { return ops.BroadcastTo(in[0], 2, 3) }, v.Signed(2, 1)),
		row("BroadcastTo", "scalar", func(in []*graph.Node) *graph.Node { return ops.BroadcastTo(in[0], 2, 2) }, v.Signed()),
		row("SumTo", "leading axis", func(in []*graph.Node) *graph.Node { return ops.SumTo(in[0], 3) }, v.Signed(2, 3)),
		row("SumTo", "size-1 axis", func(in []*graph.Node) *graph.Node { return ops.SumTo(in[0], 2, 1) }, v.Signed(2, 3)),
		row("SumTo", "scalar", func(in []*graph.Node) *graph.Node { return ops.SumTo(in[0]) }, v.Signed(2, 3)),
		row("Slice", "last axis", func(in []*graph.Node) *graph.Node { return ops.Slice(in[0], 1, 1, 3) }, v.Signed(3, 4)),
		row("Slice", "negative axis", func(in []*graph.Node) *graph.Node { return ops.Slice(in[0], -2, 0, 2) }, v.Signed(3, 4)),
		row("Pad", "last axis", func(in []*graph.Node) *graph.Node { return ops.Pad(in[0], 1, 1, 2) }, v.Signed(2, 3)),
		row("Pad", "axis 0", func(in []*graph.Node) *graph.Node { return ops.Pad(in[0], -2, 2, 0) }, v.Signed(2, 3)),
		row("Concat", "axis 0", func(in []*graph.Node) *graph.Node { return ops.Concat(0, in...) }, v.Signed(1, 3), v.Signed(2, 3)),
		row("Concat", "three on the last axis", func(in []*graph.Node) *graph.Node { return ops.Concat(-1, in...) },
			v.Signed(2, 1), v.Signed(2, 2), v.Signed(2, 3)),
	)
	rows = append(rows, randomRows(v)...)
	rows = append(rows, linalgRows(NewValues(21))...)
	return rows
}

// linalgRows are the rows of the linear-algebra ops (ops/linalg_*.go).
// Cholesky and the ops built on it take a symmetric positive-definite
// matrix, built inside the checked function from a free one as users
// build theirs (A = X·Xᵀ + n·I), and Eigh a symmetric one (X + Xᵀ), so
// that finite differences move A symmetrically; triangular solves take
// matrices whose diagonal is well away from 0, as do Solve, Inverse and
// Det. Builders returning several nodes (SlogDet, QR, Eigh, SVD) are
// checked as functions of one or more of them.
func linalgRows(v Values) []Case {
	one := func(f func(*graph.Node) *graph.Node) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return f(in[0]) }
	}
	tril := func(k int) func(*graph.Node) *graph.Node {
		return func(x *graph.Node) *graph.Node { return ops.Tril(x, k) }
	}
	triu := func(k int) func(*graph.Node) *graph.Node {
		return func(x *graph.Node) *graph.Node { return ops.Triu(x, k) }
	}
	solve := func(o ops.TriangularOptions) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return ops.TriangularSolve(in[0], in[1], o) }
	}
	solveGeneral := func(in []*graph.Node) *graph.Node { return ops.Solve(in[0], in[1]) }
	// A matrix whose factorisation swaps rows: each column's largest
	// element lies off the diagonal.
	pivoting := TensorOf([]int{3, 3}, 0.3, 2, -0.5, 1.8, -0.4, 0.6, 0.5, 0.7, -2.1)
	rows := []Case{
		row("Tril", "k 0", one(tril(0)), v.Signed(3, 3)),
		row("Tril", "k -1 batched wide", one(tril(-1)), v.Signed(2, 3, 4)),
		row("Triu", "k 1 batched tall", one(triu(1)), v.Signed(2, 4, 3)),
		row("Diagonal", "square", one(ops.Diagonal), v.Signed(3, 3)),
		row("Diagonal", "batched wide", one(ops.Diagonal), v.Signed(2, 2, 3)),
		row("Diagonal", "tall", one(ops.Diagonal), v.Signed(3, 2)),
		row("DiagEmbed", "vector", one(ops.DiagEmbed), v.Signed(3)),
		row("DiagEmbed", "batched", one(ops.DiagEmbed), v.Signed(2, 3)),
		row("TriangularSolve", "lower left", solve(ops.TriangularOptions{}), v.WellConditioned(3), v.Signed(3, 2)),
		row("TriangularSolve", "upper left transposed", solve(ops.TriangularOptions{Upper: true, Transpose: true}), v.WellConditioned(3), v.Signed(3, 2)),
		row("TriangularSolve", "lower right transposed batched", solve(ops.TriangularOptions{Right: true, Transpose: true}),
			v.WellConditioned(2, 3), v.Signed(2, 2, 3)),
		row("TriangularSolve", "upper right unit diagonal", solve(ops.TriangularOptions{Upper: true, Right: true, UnitDiagonal: true}),
			v.WellConditioned(3), v.Signed(2, 3)),
		row("TriangularSolve", "lower left unit diagonal rank 4", solve(ops.TriangularOptions{UnitDiagonal: true}),
			v.WellConditioned(2, 1, 2), v.Signed(2, 1, 2, 3)),
		row("Solve", "matrix", solveGeneral, v.WellConditioned(3), v.Signed(3, 2)),
		row("Solve", "batched", solveGeneral, v.WellConditioned(2, 3), v.Signed(2, 3, 1)),
		row("Solve", "rank 4", solveGeneral, v.WellConditioned(2, 1, 2), v.Signed(2, 1, 2, 3)),
		row("Solve", "pivoting", solveGeneral, pivoting, v.Signed(3, 2)),
		row("Inverse", "matrix", one(ops.Inverse), v.WellConditioned(3)),
		row("Inverse", "pivoting", one(ops.Inverse), pivoting),
		row("Inverse", "batched", one(ops.Inverse), v.WellConditioned(2, 2)),
		row("Det", "matrix", one(ops.Det), v.WellConditioned(3)),
		row("Det", "batched", one(ops.Det), v.WellConditioned(2, 2)),
		row("Det", "pivoting", one(ops.Det), pivoting),
		row("MatrixExp", "matrix", one(ops.MatrixExp), v.Signed(3, 3)),
		row("MatrixExp", "batched", one(ops.MatrixExp), v.Signed(2, 2, 2)),
		row("MatrixExp", "scaled and squared", one(ops.MatrixExp), TensorOf([]int{2, 2}, 3.1, -2.7, 2.9, 3.3)),
	}
	composite := []Case{
		row("Trace", "batched", one(ops.Trace), v.Signed(2, 3, 3)),
		row("Eye", "times a batch", one(func(x *graph.Node) *graph.Node { return ops.Mul(x, ops.Eye(x.Graph(), x.DType(), 3)) }), v.Signed(2, 3, 3)),
		row("Cholesky", "matrix", one(func(x *graph.Node) *graph.Node { return ops.Cholesky(positiveDefinite(x)) }), v.Signed(3, 3)),
		row("Cholesky", "batched", one(func(x *graph.Node) *graph.Node { return ops.Cholesky(positiveDefinite(x)) }), v.Signed(2, 2, 2)),
		row("CholeskySolve", "batched", func(in []*graph.Node) *graph.Node {
			return ops.CholeskySolve(ops.Cholesky(positiveDefinite(in[0])), in[1])
		}, v.Signed(2, 3, 3), v.Signed(2, 3, 2)),
		row("CholeskySolve", "triangular factor", func(in []*graph.Node) *graph.Node { return ops.CholeskySolve(in[0], in[1]) },
			v.WellConditioned(3), v.Signed(3, 1)),
		row("LogDet", "matrix", one(func(x *graph.Node) *graph.Node { return ops.LogDet(positiveDefinite(x)) }), v.Signed(3, 3)),
		row("LogDet", "batched", one(func(x *graph.Node) *graph.Node { return ops.LogDet(positiveDefinite(x)) }), v.Signed(2, 2, 2)),
		row("SVD", "values", one(func(x *graph.Node) *graph.Node { _, s, _ := ops.SVD(x); return s }), v.Signed(3, 2)),
		row("SVD", "U of a tall batch", one(func(x *graph.Node) *graph.Node { u, _, _ := ops.SVD(x); return u }), v.Signed(2, 4, 3)),
		row("SVD", "Vh of a wide matrix", one(func(x *graph.Node) *graph.Node { _, _, vh := ops.SVD(x); return vh }), v.Signed(2, 4)),
		row("SVD", "all three of a square matrix", one(func(x *graph.Node) *graph.Node {
			u, s, vh := ops.SVD(x)
			return ops.Concat(-2, u, vh, ops.Reshape(s, 1, 3))
		}), v.Signed(3, 3)),
		row("SVD", "U and Vh of a wide matrix", one(func(x *graph.Node) *graph.Node { u, _, vh := ops.SVD(x); return ops.Concat(-1, u, vh) }), v.Signed(2, 3)),
		row("SlogDet", "log |det| batched", one(func(x *graph.Node) *graph.Node { _, l := ops.SlogDet(x); return l }), v.WellConditioned(2, 3)),
		row("SlogDet", "sign times log |det|, pivoting", one(func(x *graph.Node) *graph.Node { s, l := ops.SlogDet(x); return ops.Mul(s, l) }), pivoting),
		row("QR", "Q of a tall batch", one(func(x *graph.Node) *graph.Node { q, _ := ops.QR(x); return q }), v.Signed(2, 4, 3)),
		row("QR", "R", one(func(x *graph.Node) *graph.Node { _, r := ops.QR(x); return r }), v.Signed(3, 3)),
		row("QR", "Q and R together", one(func(x *graph.Node) *graph.Node { q, r := ops.QR(x); return ops.Concat(-2, q, r) }), v.Signed(3, 2)),
		row("Eigh", "values", one(func(x *graph.Node) *graph.Node { w, _ := ops.Eigh(symmetric(x)); return w }), v.Signed(3, 3)),
		row("Eigh", "vectors batched", one(func(x *graph.Node) *graph.Node { _, u := ops.Eigh(symmetric(x)); return u }), v.Signed(2, 3, 3)),
		row("Eigh", "vectors scaled by values", one(func(x *graph.Node) *graph.Node {
			w, u := ops.Eigh(symmetric(x))
			return ops.Mul(u, ops.Reshape(w, 1, 2))
		}), v.Signed(2, 2)),
	}
	for i := range composite {
		composite[i].Composite = true
	}
	return append(rows, composite...)
}

// symmetric returns X + Xᵀ for a batch of square matrices X (rank 2 or 3).
func symmetric(x *graph.Node) *graph.Node {
	perm := []int{1, 0}
	if x.Type().Rank() == 3 {
		perm = []int{0, 2, 1}
	}
	return ops.Add(x, ops.Transpose(x, perm...))
}

// positiveDefinite returns X·Xᵀ + n·I for a batch of n×n matrices X (rank 2
// or 3): symmetric positive-definite, as users build covariances.
func positiveDefinite(x *graph.Node) *graph.Node {
	n := x.Shape()[x.Type().Rank()-1]
	return ops.Add(ops.MatMulT(x, x, false, true), ops.Scale(ops.Eye(x.Graph(), x.DType(), n), float64(n)))
}

// ScanTable is rows of loops through ops.Scan, for the checks the op
// table's rows go through.
func ScanTable() []Case {
	v := NewValues(11)
	nodes := func(xs ...*graph.Node) []*graph.Node { return xs }
	return []Case{
		{Builder: "Scan", Variant: "tanh RNN with matrix products", Inputs: []*tensor.Dense{
			v.Signed(2, 3), v.Uniform(-0.6, 0.6, 3, 3), v.Uniform(-0.6, 0.6, 2, 3), v.Signed(4, 2, 2)},
			Build: func(in []*graph.Node) *graph.Node {
				W, U := in[1], in[2]
				_, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					h := ops.Tanh(ops.Add(ops.MatMul(c[0], W), ops.MatMul(x[0], U)))
					return nodes(h), nodes(h)
				}, nodes(in[0]), nodes(in[3]))
				return ys[0]
			}},
		{Builder: "Scan", Variant: "carried tuple with gates", Inputs: []*tensor.Dense{
			v.Signed(3), v.Signed(3), v.Signed(5, 3), v.Signed(3)},
			Build: func(in []*graph.Node) *graph.Node {
				w := in[3]
				final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					cell := ops.Add(ops.Mul(ops.Sigmoid(x[0]), c[1]), ops.Mul(ops.Sigmoid(ops.Mul(c[0], w)), ops.Tanh(x[0])))
					h := ops.Mul(ops.Sigmoid(ops.Add(x[0], c[0])), ops.Tanh(cell))
					return nodes(h, cell), nil
				}, nodes(in[0], in[1]), nodes(in[2]))
				return ops.Concat(0, final[0], final[1])
			}},
		{Builder: "Scan", Variant: "reverse, two sequences", Inputs: []*tensor.Dense{
			v.Signed(2), v.Signed(4, 2), v.Signed(4, 2)},
			Build: func(in []*graph.Node) *graph.Node {
				_, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					s := ops.Add(ops.Mul(c[0], x[0]), ops.Sin(x[1]))
					return nodes(s), nodes(ops.Mul(s, x[1]))
				}, nodes(in[0]), nodes(in[1], in[2]), ops.Reverse())
				return ys[0]
			}},
		{Builder: "Scan", Variant: "no carry (a map) reading a captured value", Inputs: []*tensor.Dense{
			v.Signed(3, 2), v.Signed(2)},
			Build: func(in []*graph.Node) *graph.Node {
				_, ys := ops.Scan(func(_, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					return nil, nodes(ops.Mul(ops.Mul(x[0], x[0]), ops.Exp(ops.Scale(in[1], 0.5))))
				}, nil, nodes(in[0]))
				return ys[0]
			}},
		{Builder: "Scan", Variant: "Steps without sequences (an integrator)", Inputs: []*tensor.Dense{
			v.Signed(2), v.Uniform(0.5, 1.5)},
			Build: func(in []*graph.Node) *graph.Node {
				k := in[1]
				final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
					x, vel := ops.Slice(c[0], 0, 0, 1), ops.Slice(c[0], 0, 1, 2)
					acc := ops.Neg(ops.Mul(k, ops.Sin(x)))
					return nodes(ops.Concat(0, ops.Add(x, ops.Scale(vel, 0.1)), ops.Add(vel, ops.Scale(acc, 0.1)))), nil
				}, nodes(in[0]), nil, ops.Steps(6))
				return final[0]
			}},
		{Builder: "Scan", Variant: "nested Scan", Inputs: []*tensor.Dense{
			v.Signed(2), v.Signed(3, 2), v.Signed(2, 2)},
			Build: func(in []*graph.Node) *graph.Node {
				inner := in[2]
				final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					f, _ := ops.Scan(func(ci, xi []*graph.Node) ([]*graph.Node, []*graph.Node) {
						return nodes(ops.Tanh(ops.Add(ops.Mul(ci[0], xi[0]), x[0]))), nil
					}, nodes(c[0]), nodes(inner))
					return nodes(f[0]), nil
				}, nodes(in[0]), nodes(in[1]))
				return final[0]
			}},
	}
}

// CondTable is rows of branches through ops.Cond, for the checks the op
// table's rows go through: the predicate (input 0) selects a branch and
// gets no gradient; each branch is taken in some row.
func CondTable() []Case {
	v := NewValues(13)
	nodes := func(xs ...*graph.Node) []*graph.Node { return xs }
	const predNoGrad = "the predicate only selects a branch: it gets no gradient"
	cond := func(variant string, pred *tensor.Dense, build func(in []*graph.Node) *graph.Node, inputs ...*tensor.Dense) Case {
		c := Case{Builder: "Cond", Variant: variant, Build: build, Inputs: append([]*tensor.Dense{pred}, inputs...),
			NoGrad: predNoGrad, NoGradInputs: []int{0}}
		for i := 1; i < len(c.Inputs); i++ {
			c.Checked = append(c.Checked, i)
		}
		return c
	}
	// An operand and a weight the branches capture.
	captured := func(in []*graph.Node) *graph.Node {
		w := in[2]
		return ops.Cond(in[0], func(x []*graph.Node) []*graph.Node {
			return nodes(ops.Add(ops.Tanh(ops.Mul(x[0], w)), ops.Sin(x[0])))
		}, func(x []*graph.Node) []*graph.Node {
			return nodes(ops.Mul(ops.Square(x[0]), ops.Exp(w)))
		}, nodes(in[1]))[0]
	}
	// Two outputs; each branch captures a value the other does not read.
	twoOutputs := func(in []*graph.Node) *graph.Node {
		a, b := in[2], in[3]
		outs := ops.Cond(in[0], func(x []*graph.Node) []*graph.Node {
			return nodes(ops.Mul(x[0], a), ops.Sin(a))
		}, func(x []*graph.Node) []*graph.Node {
			return nodes(ops.Exp(ops.Mul(x[0], b)), ops.Mul(b, b))
		}, nodes(in[1]))
		return ops.Concat(0, outs[0], outs[1])
	}
	// A step's predicate: the sign of its slice's sum, which changes
	// across the steps (sums 0.8, -0.5, -0.5, 1.4).
	inScan := func(in []*graph.Node) *graph.Node {
		w := in[2]
		final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			pred := ops.Greater(ops.Sum(x[0]), ops.Sum(ops.Neg(x[0])))
			return ops.Cond(pred, func(o []*graph.Node) []*graph.Node {
				return nodes(ops.Tanh(ops.Add(ops.Mul(o[0], w), o[1])))
			}, func(o []*graph.Node) []*graph.Node {
				return nodes(ops.Sin(ops.Mul(o[0], o[1])))
			}, nodes(c[0], x[0])), nil
		}, nodes(in[0]), nodes(in[1]))
		return final[0]
	}
	steps := TensorOf([]int{4, 2}, 0.5, 0.3, -0.7, 0.2, 0.4, -0.9, 0.8, 0.6)
	// A Cond in a branch of a Cond, reading the outer operand by capture.
	nested := func(in []*graph.Node) *graph.Node {
		return ops.Cond(in[0], func(x []*graph.Node) []*graph.Node {
			return ops.Cond(in[2], func(y []*graph.Node) []*graph.Node {
				return nodes(ops.Mul(ops.Sin(y[0]), x[0]))
			}, func(y []*graph.Node) []*graph.Node {
				return nodes(ops.Square(y[0]))
			}, nodes(ops.Cos(x[0])))
		}, func(x []*graph.Node) []*graph.Node {
			return nodes(ops.Neg(x[0]))
		}, nodes(in[1]))[0]
	}
	return []Case{
		cond("then taken: an operand and a captured weight", TensorOf(nil, 1), captured, v.Signed(2, 3), v.Signed(3)),
		cond("else taken: an operand and a captured weight", TensorOf(nil, 0), captured, v.Signed(2, 3), v.Signed(3)),
		cond("then taken by an integer predicate: two outputs, captures of either branch", IntsOf(graph.Int64, nil, -2),
			twoOutputs, v.Signed(3), v.Signed(3), v.Signed(3)),
		cond("else taken by an integer predicate: two outputs, captures of either branch", IntsOf(graph.Int64, nil, 0),
			twoOutputs, v.Signed(3), v.Signed(3), v.Signed(3)),
		{Builder: "Cond", Variant: "in a Scan body, both branches taken across the steps", Build: inScan,
			Inputs: []*tensor.Dense{v.Signed(2), steps, v.Signed(2)}},
		cond("nested, inner then taken", TensorOf(nil, 1), func(in []*graph.Node) *graph.Node {
			return nested([]*graph.Node{in[0], in[1], in[0]})
		}, v.Signed(2)),
		cond("nested, inner else taken", TensorOf(nil, 1), func(in []*graph.Node) *graph.Node {
			return nested([]*graph.Node{in[0], in[1], ops.Sub(in[0], in[0])})
		}, v.Signed(2)),
	}
}

// WhileTable is rows of loops through ops.While, for the checks the op
// table's rows go through: input 0 is the bound a counter carried beside
// the state must stay under, which sets the number of steps (none, one,
// stopping early, stopped by MaxSteps) and gets no gradient.
func WhileTable() []Case {
	v := NewValues(17)
	loop := func(max int) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node {
			limit, w, b := in[0], in[2], in[3]
			one := ops.Div(limit, limit)
			final, _ := ops.While(func(c []*graph.Node) *graph.Node {
				return ops.Less(c[1], limit)
			}, func(c []*graph.Node) []*graph.Node {
				h := ops.Tanh(ops.Add(ops.Mul(c[0], w), ops.Sum(ops.Mul(b, c[0]))))
				return []*graph.Node{h, ops.Add(c[1], one)}
			}, []*graph.Node{in[1], ops.Sub(limit, limit)}, ops.MaxSteps(max))
			return final[0]
		}
	}
	row := func(variant string, limit float64, max int) Case {
		return Case{Builder: "While", Variant: variant, Build: loop(max),
			Inputs:  []*tensor.Dense{TensorOf(nil, limit), v.Signed(3), v.Uniform(0.5, 1.2, 3), v.Signed(3)},
			Checked: []int{1, 2, 3}, NoGrad: "the bound only decides the number of steps: it gets no gradient", NoGradInputs: []int{0}}
	}
	return []Case{
		row("zero steps", 0.5, 4),
		row("one step", 1.5, 4),
		row("stopping early", 3.5, 6),
		row("hitting MaxSteps", 50, 5),
	}
}

// gradientPenalty returns ‖∇⟨w, f⟩‖² of f's gradient with respect to its
// first input, for fixed weights w.
func gradientPenalty(f func(in []*graph.Node) *graph.Node) func(in []*graph.Node) *graph.Node {
	return func(in []*graph.Node) *graph.Node {
		g := in[0].Graph()
		y := f(in)
		grads, err := compile.GradWith(ops.Sum(ops.Mul(y, g.Const(Convert(NewValues(5).Signed(y.Shape()...), y.DType())))), in[:1], compile.ZerosIfDisconnected())
		if err != nil {
			return g.Fail(err)
		}
		return ops.Sum(ops.Square(grads[0]))
	}
}

// TensorOf builds a float64 tensor; the table is written by hand, so a
// length that does not fit the shape is a bug in the test itself.
func TensorOf(shape []int, vals ...float64) *tensor.Dense {
	t, err := graph.FromFloat64s(graph.Float64, vals, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// Convert returns a float tensor's values in dtype (t itself when it has
// that dtype, or is not float): rows built in float32 weight their
// outputs in float32.
func Convert(t *tensor.Dense, dtype tensor.Dtype) *tensor.Dense {
	if !graph.IsFloat(t.Dtype()) || t.Dtype() == dtype {
		return t
	}
	v, err := graph.FromFloat64s(dtype, graph.Float64s(t), t.Shape()...)
	if err != nil {
		panic(err)
	}
	return v
}

// IntsOf returns an integer tensor of the given dtype, for indices and
// labels.
func IntsOf(dtype tensor.Dtype, shape []int, vals ...int64) *tensor.Dense {
	t, err := graph.FromInt64s(dtype, vals, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// Values draws sample inputs from a seeded source.
type Values struct{ r *rand.Rand }

// NewValues returns a source of sample values seeded with seed.
func NewValues(seed uint64) Values { return Values{rand.New(rand.NewPCG(seed, 1))} }

// Uniform draws from [lo, hi).
func (v Values) Uniform(lo, hi float64, shape ...int) *tensor.Dense {
	vals := make([]float64, graph.ShapeSize(shape))
	for i := range vals {
		vals[i] = lo + (hi-lo)*v.r.Float64()
	}
	return TensorOf(shape, vals...)
}

// Signed draws from ±[0.3, 1.3): away from 0, where Abs, ReLU, Sign and
// division have their kinks and poles.
func (v Values) Signed(shape ...int) *tensor.Dense {
	t := v.Uniform(0.3, 1.3, shape...)
	for i := range t.Float64s() {
		if v.r.IntN(2) == 0 {
			t.Float64s()[i] *= -1
		}
	}
	return t
}

// Positive draws from [0.5, 1.5), inside the domain of Log, Sqrt and Pow's
// base.
func (v Values) Positive(shape ...int) *tensor.Dense { return v.Uniform(0.5, 1.5, shape...) }

// WellConditioned draws n×n matrices, batched over leading axes, of
// signed values whose diagonal is ±[1.5, 2.5): at the table's small
// orders, well away from singular, whether read whole or as a triangle.
// dims are the leading axes and then n: WellConditioned(2, 3) is (2,3,3).
func (v Values) WellConditioned(dims ...int) *tensor.Dense {
	n := dims[len(dims)-1]
	t := v.Signed(append(dims, n)...)
	x := t.Float64s()
	for m := 0; m < len(x); m += n * n {
		for i := range n {
			x[m+i*n+i] = math.Copysign(1.2+math.Abs(x[m+i*n+i]), x[m+i*n+i])
		}
	}
	return t
}
