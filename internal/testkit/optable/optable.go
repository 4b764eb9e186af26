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
		row("MoveAxis", "first to last", func(in []*graph.Node) *graph.Node { return ops.MoveAxis(in[0], 0, 2) }, v.Signed(2, 3, 2)),
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
