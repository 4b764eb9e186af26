package gradcheck_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// opCase is one row of the built-in op table: a builder of package ops
// applied to sample inputs. Every builder has at least one row (see
// TestEveryBuilderHasARow); every row goes through CheckOp, so to first
// and second order, and through GradGradCheck of its gradient, so to third
// order, with the op taken from a node the builder built, so
// builders with non-tensor parameters (axes, shapes, constants) are
// checked through CheckOp too.
type opCase struct {
	builder string // the ops builder the row covers
	variant string // what this row's inputs exercise
	build   func(in []*graph.Node) *graph.Node
	inputs  []*tensor.Dense
	// checked lists the inputs whose derivatives are checked (nil: all).
	checked []int
	// noGrad says why the op gives no gradient for the inputs in
	// noGradInputs; the test checks that its Backward returns nil for
	// them, rather than skipping them.
	noGrad       string
	noGradInputs []int
	// stopsGradient marks StopGradient, whose missing gradient finite
	// differences do see: CheckOp must report it.
	stopsGradient bool
	// composite marks builders made of other ops (Conv1D is Conv2D
	// between reshapes): the row checks the builder as a function.
	composite bool
	// eps is the finite-difference step (0: the default).
	eps float64
}

func (c opCase) name() string { return c.builder + "/" + c.variant }

func unaryRow(name, variant string, f func(*graph.Node) *graph.Node, x *tensor.Dense) opCase {
	return opCase{builder: name, variant: variant, build: func(in []*graph.Node) *graph.Node { return f(in[0]) },
		inputs: []*tensor.Dense{x}}
}

func binaryRow(name, variant string, f func(a, b *graph.Node) *graph.Node, a, b *tensor.Dense) opCase {
	return opCase{builder: name, variant: variant, build: func(in []*graph.Node) *graph.Node { return f(in[0], in[1]) },
		inputs: []*tensor.Dense{a, b}}
}

func row(name, variant string, build func(in []*graph.Node) *graph.Node, inputs ...*tensor.Dense) opCase {
	return opCase{builder: name, variant: variant, build: build, inputs: inputs}
}

const maskNoGrad = "a mask is piecewise constant: its gradient is zero away from ties, so Backward returns none"

// builtinTable is the table of every built-in op. Sample inputs stay away
// from kinks (0 for Abs, ReLU and Sign; ties for Maximum, Minimum and Max)
// and inside domains (positive for Log, Sqrt and Pow's base).
func builtinTable() []opCase {
	v := newValues(1)
	var rows []opCase

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
		{"Add", ops.Add, v.signed, v.signed},
		{"Sub", ops.Sub, v.signed, v.signed},
		{"Mul", ops.Mul, v.signed, v.signed},
		{"Div", ops.Div, v.signed, v.signed},
		{"Pow", ops.Pow, v.positive, v.signed},
		{"Maximum", ops.Maximum, v.signed, v.signed},
		{"Minimum", ops.Minimum, v.signed, v.signed},
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
			r := binaryRow(m.name, l.variant, m.f, v.signed(l.a...), v.signed(l.b...))
			r.noGrad, r.noGradInputs = maskNoGrad, []int{0, 1}
			rows = append(rows, r)
		}
	}

	// Elementwise unary ops.
	unaries := []struct {
		name string
		f    func(*graph.Node) *graph.Node
		x    func(shape ...int) *tensor.Dense
	}{
		{"Neg", ops.Neg, v.signed},
		{"Exp", ops.Exp, v.signed},
		{"Log", ops.Log, v.positive},
		{"Log1p", ops.Log1p, func(s ...int) *tensor.Dense { return v.uniform(-0.5, 1.5, s...) }},
		{"Sqrt", ops.Sqrt, v.positive},
		{"Square", ops.Square, v.signed},
		{"Abs", ops.Abs, v.signed},
		{"Sin", ops.Sin, v.signed},
		{"Cos", ops.Cos, v.signed},
		{"Tanh", ops.Tanh, v.signed},
		{"Sigmoid", ops.Sigmoid, v.signed},
		{"ReLU", ops.ReLU, v.signed},
		{"Softplus", ops.Softplus, v.signed},
		{"PowConst", func(x *graph.Node) *graph.Node { return ops.PowConst(x, 2.5) }, v.positive},
		{"PowConst", func(x *graph.Node) *graph.Node { return ops.PowConst(x, -3) }, v.signed},
		{"Scale", func(x *graph.Node) *graph.Node { return ops.Scale(x, -1.7) }, v.signed},
		{"Erf", ops.Erf, v.signed},
		{"GELU", func(x *graph.Node) *graph.Node { return ops.GELU(x, false) }, v.signed},
		{"GELU", func(x *graph.Node) *graph.Node { return ops.GELU(x, true) }, v.signed},
		{"SiLU", ops.SiLU, v.signed},
	}
	for _, u := range unaries {
		rows = append(rows, unaryRow(u.name, "matrix", u.f, u.x(2, 3)), unaryRow(u.name, "scalar", u.f, u.x()))
	}
	sign := unaryRow("Sign", "matrix", ops.Sign, v.signed(2, 3))
	sign.noGrad, sign.noGradInputs = "Sign is piecewise constant: its gradient is zero away from 0, so Backward returns none", []int{0}
	rows = append(rows, sign)

	where := row("Where", "broadcast", func(in []*graph.Node) *graph.Node { return ops.Where(in[0], in[1], in[2]) },
		tensorOf([]int{2, 3}, 1, 0, 0, 1, 1, 0), v.signed(2, 3), v.signed(3))
	where.checked = []int{1, 2}
	where.noGrad, where.noGradInputs = "the condition only selects: it gets no gradient (and finite differences of a 0/1 mask jump)", []int{0}
	whereScalar := row("Where", "scalar branch", where.build, tensorOf([]int{3}, 0, 1, 1), v.signed(), v.signed(3))
	whereScalar.checked, whereScalar.noGrad, whereScalar.noGradInputs = where.checked, where.noGrad, where.noGradInputs
	rows = append(rows, where, whereScalar)

	rows = append(rows, row("Identity", "matrix", func(in []*graph.Node) *graph.Node { return ops.Identity(in[0]) }, v.signed(2, 3)))
	stop := row("StopGradient", "matrix", func(in []*graph.Node) *graph.Node { return ops.StopGradient(in[0]) }, v.signed(2, 3))
	stop.noGrad, stop.noGradInputs, stop.stopsGradient = "StopGradient blocks the gradient on purpose", []int{0}, true
	rows = append(rows, stop)

	// Linear algebra: plain, batched, a batch times a shared matrix (both
	// ways) and every transpose flag.
	matmul := func(in []*graph.Node) *graph.Node { return ops.MatMul(in[0], in[1]) }
	matmulT := func(ta, tb bool) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return ops.MatMulT(in[0], in[1], ta, tb) }
	}
	rows = append(rows,
		row("MatMul", "matrix", matmul, v.signed(2, 3), v.signed(3, 4)),
		row("MatMul", "batched", matmul, v.signed(2, 2, 3), v.signed(2, 3, 2)),
		row("MatMul", "batch times matrix", matmul, v.signed(2, 2, 3), v.signed(3, 2)),
		row("MatMul", "matrix times batch", matmul, v.signed(2, 3), v.signed(2, 3, 2)),
		row("MatMulT", "transA", matmulT(true, false), v.signed(3, 2), v.signed(3, 4)),
		row("MatMulT", "transB", matmulT(false, true), v.signed(2, 3), v.signed(4, 3)),
		row("MatMulT", "both", matmulT(true, true), v.signed(3, 2), v.signed(4, 3)),
		row("MatMulT", "batched transA", matmulT(true, false), v.signed(2, 3, 2), v.signed(2, 3, 4)),
		row("MatMulT", "batched transB", matmulT(false, true), v.signed(2, 2, 3), v.signed(2, 4, 3)),
		row("MatMulT", "batched both", matmulT(true, true), v.signed(2, 3, 2), v.signed(2, 4, 3)),
		row("MatMulT", "batch times matrix transB", matmulT(false, true), v.signed(2, 2, 3), v.signed(4, 3)),
		row("MatMulT", "batch times matrix transA", matmulT(true, false), v.signed(2, 3, 2), v.signed(3, 2)),
		row("MatMulT", "batch times matrix both", matmulT(true, true), v.signed(2, 3, 2), v.signed(4, 3)),
		row("MatMulT", "matrix times batch transA", matmulT(true, false), v.signed(3, 2), v.signed(2, 3, 4)),
		row("MatMulT", "matrix times batch transB", matmulT(false, true), v.signed(2, 3), v.signed(2, 4, 3)),
		row("MatMulT", "matrix times batch both", matmulT(true, true), v.signed(3, 2), v.signed(2, 4, 3)),
	)
	matmulAdd := func(ta, tb bool) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return ops.MatMulAdd(in[0], in[1], in[2], ta, tb) }
	}
	rows = append(rows,
		row("MatMulAdd", "matrix", matmulAdd(false, false), v.signed(2, 3), v.signed(3, 4), v.signed(2, 4)),
		row("MatMulAdd", "broadcast addend", matmulAdd(false, true), v.signed(2, 3), v.signed(4, 3), v.signed(4)),
		row("MatMulAdd", "batched transA", matmulAdd(true, false), v.signed(2, 3, 2), v.signed(2, 3, 4), v.signed(2, 1, 4)),
	)

	// Convolutions: their gradients are the family's other members, so
	// the second- and third-order checks cover those too.
	conv := func(f func(x, w *graph.Node, o ops.ConvOptions) *graph.Node, o ops.ConvOptions) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return f(in[0], in[1], o) }
	}
	rows = append(rows,
		row("Conv2D", "plain", conv(ops.Conv2D, ops.ConvOptions{}), v.signed(1, 2, 4, 3), v.signed(2, 2, 2, 2)),
		row("Conv2D", "stride padding dilation", conv(ops.Conv2D, ops.ConvOptions{Stride: []int{2, 1}, Padding: []int{1, 0, 1, 1}, Dilation: []int{1, 2}}),
			v.signed(2, 1, 5, 4), v.signed(2, 1, 2, 2)),
		row("Conv2D", "groups", conv(ops.Conv2D, ops.ConvOptions{Groups: 2, Padding: []int{1}}), v.signed(1, 4, 3, 3), v.signed(2, 2, 2, 2)),
		row("Conv2D", "same", conv(ops.Conv2D, ops.ConvOptions{Same: true}), v.signed(1, 1, 3, 4), v.signed(1, 1, 2, 3)),
		row("Conv2D", "1x1", conv(ops.Conv2D, ops.ConvOptions{}), v.signed(2, 3, 2, 2), v.signed(2, 3, 1, 1)),
		row("ConvTranspose2D", "stride 2", conv(ops.ConvTranspose2D, ops.ConvOptions{Stride: []int{2}, Padding: []int{1}, OutputPadding: []int{1}}),
			v.signed(1, 2, 2, 3), v.signed(2, 1, 3, 2)),
		row("ConvTranspose2D", "groups", conv(ops.ConvTranspose2D, ops.ConvOptions{Groups: 2}), v.signed(1, 2, 2, 2), v.signed(2, 2, 2, 1)),
	)
	conv1d := row("Conv1D", "stride padding", conv(ops.Conv1D, ops.ConvOptions{Stride: []int{2}, Padding: []int{1, 0}}), v.signed(2, 2, 5), v.signed(3, 2, 2))
	conv1d.composite = true
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
	maxSquared := row("MaxPool2D", "squared", squared(maxOverlap), v.signed(1, 2, 4, 5))
	avgSquared := row("AvgPool2D", "squared", squared(avgOverlap), v.signed(1, 2, 4, 5))
	maxPenalty := row("MaxPool2D", "gradient penalty", gradientPenalty(squared(maxOverlap)), v.signed(1, 2, 4, 5))
	avgPenalty := row("AvgPool2D", "gradient penalty", gradientPenalty(squared(avgOverlap)), v.signed(1, 2, 4, 5))
	global := row("GlobalAvgPool2D", "images", func(in []*graph.Node) *graph.Node { return ops.GlobalAvgPool2D(in[0]) }, v.signed(2, 2, 3, 2))
	flatten := row("Flatten", "from axis 1", func(in []*graph.Node) *graph.Node { return ops.Flatten(in[0], 1) }, v.signed(2, 2, 3))
	flattenLast := row("Flatten", "from axis -2", func(in []*graph.Node) *graph.Node { return ops.Flatten(in[0], -2) }, v.signed(2, 2, 3))
	for _, r := range []*opCase{&maxSquared, &avgSquared, &maxPenalty, &avgPenalty, &global, &flatten, &flattenLast} {
		r.composite = true
	}
	rows = append(rows,
		row("MaxPool2D", "kernel 2", pool(ops.MaxPool2D, ops.PoolOptions{Kernel: []int{2}}), v.signed(2, 1, 4, 4)),
		row("MaxPool2D", "kernel 3 stride 2 padding 1 ceil", maxOverlap, v.signed(1, 2, 4, 5)),
		row("MaxPool2D", "dilation 2 stride 1", pool(ops.MaxPool2D, ops.PoolOptions{Kernel: []int{2, 3}, Stride: []int{1}, Dilation: []int{2, 1}}), v.signed(1, 1, 5, 4)),
		row("AvgPool2D", "kernel 2", pool(ops.AvgPool2D, ops.PoolOptions{Kernel: []int{2}}), v.signed(2, 1, 4, 4)),
		row("AvgPool2D", "kernel 3 stride 2 padding 1 ceil", avgOverlap, v.signed(1, 2, 4, 5)),
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
	variance := row("ChannelVar", "images", channel(ops.ChannelVar), v.signed(2, 3, 2, 2))
	bnImages := row("BatchNorm", "images", batchNorm(1e-5), v.signed(2, 3, 2, 2), v.signed(3), v.signed(3))
	bnRank2 := row("BatchNorm", "rank 2 eps 0.1", batchNorm(0.1), v.signed(4, 3), v.signed(3), v.signed(3))
	bnRank3 := row("BatchNorm", "rank 3", batchNorm(1e-5), v.signed(2, 2, 3), v.signed(2), v.signed(2))
	// Squared, the output gradient depends on x, so the second
	// derivative goes through the gradient's derivative with respect to
	// the output gradient too; the penalties go one order further.
	square := func(f func(in []*graph.Node) *graph.Node) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return ops.Square(f(in)) }
	}
	bnSquared := row("BatchNorm", "squared", square(batchNorm(1e-5)), v.signed(2, 3, 2), v.signed(3), v.signed(3))
	bnPenalty := row("BatchNorm", "gradient penalty", gradientPenalty(square(batchNorm(1e-5))), v.signed(2, 3, 2), v.signed(3), v.signed(3))
	varPenalty := row("ChannelVar", "gradient penalty", gradientPenalty(square(channel(ops.ChannelVar))), v.signed(3, 2, 2))
	affinePenalty := row("ChannelAffine", "gradient penalty",
		gradientPenalty(square(func(in []*graph.Node) *graph.Node { return ops.ChannelAffine(in[0], in[1], in[2]) })),
		v.signed(2, 3, 2), v.signed(3), v.signed(3))
	for _, r := range []*opCase{&variance, &bnImages, &bnRank2, &bnRank3, &bnSquared, &bnPenalty, &varPenalty, &affinePenalty} {
		r.composite = true
	}
	rows = append(rows, variance, bnImages, bnRank2, bnRank3, bnSquared, bnPenalty, varPenalty, affinePenalty,
		row("ChannelSum", "images", channel(ops.ChannelSum), v.signed(2, 3, 2, 2)),
		row("ChannelMean", "rank 3", channel(ops.ChannelMean), v.signed(2, 3, 2)),
		row("ChannelAffine", "scale and shift", func(in []*graph.Node) *graph.Node { return ops.ChannelAffine(in[0], in[1], in[2]) },
			v.signed(2, 3, 2, 2), v.signed(3), v.signed(3)),
		row("ChannelAffine", "scale", func(in []*graph.Node) *graph.Node { return ops.ChannelAffine(in[0], in[1], nil) },
			v.signed(3, 2), v.signed(2)),
		row("ChannelAffine", "shift", func(in []*graph.Node) *graph.Node { return ops.ChannelAffine(in[0], nil, in[1]) },
			v.signed(2, 3, 2), v.signed(3)),
	)

	// Neural-network ops.
	for _, s := range []struct {
		name string
		f    func(*graph.Node, int) *graph.Node
	}{{"Softmax", ops.Softmax}, {"LogSoftmax", ops.LogSoftmax}} {
		rows = append(rows,
			row(s.name, "last axis", func(in []*graph.Node) *graph.Node { return s.f(in[0], 1) }, v.signed(2, 3)),
			row(s.name, "axis 0", func(in []*graph.Node) *graph.Node { return s.f(in[0], 0) }, v.signed(3, 2)),
			row(s.name, "middle axis of rank 3", func(in []*graph.Node) *graph.Node { return s.f(in[0], -2) }, v.signed(2, 3, 2)),
		)
	}
	ce := row("CrossEntropy", "labels", func(in []*graph.Node) *graph.Node { return ops.CrossEntropy(in[0], in[1]) },
		v.signed(3, 4), tensorOf([]int{3}, 0, 3, 1))
	ce.checked, ce.noGrad, ce.noGradInputs = []int{0}, "labels are class indices: discrete, no gradient", []int{1}
	rows = append(rows, ce,
		row("CrossEntropyOneHot", "probabilities", func(in []*graph.Node) *graph.Node { return ops.CrossEntropyOneHot(in[0], in[1]) },
			v.signed(3, 4), v.uniform(0.1, 0.6, 3, 4)))
	ceInt := row("CrossEntropy", "int64 labels", func(in []*graph.Node) *graph.Node { return ops.CrossEntropy(in[0], in[1]) },
		v.signed(3, 4), intsOf(graph.Int64, []int{3}, 0, 3, 1))
	ceInt.noGrad, ceInt.noGradInputs = "labels are integers: no gradient", []int{1}
	rows = append(rows, ceInt)
	oneHotInt := row("OneHot", "int32 labels", func(in []*graph.Node) *graph.Node { return ops.OneHot(in[0], 3, graph.Float64) },
		intsOf(graph.Int32, []int{2, 2}, 2, 0, 1, 2))
	oneHotInt.noGrad, oneHotInt.noGradInputs = "labels are integers: no gradient", []int{0}
	rows = append(rows, oneHotInt)
	oneHot := row("OneHot", "labels", func(in []*graph.Node) *graph.Node { return ops.OneHot(in[0], 3, in[0].DType()) }, tensorOf([]int{4}, 2, 0, 1, 2))
	oneHot.checked = []int{} // the kernel alone: a label moved by ±Eps is no class index
	oneHot.noGrad, oneHot.noGradInputs = "labels are class indices: discrete, no gradient", []int{0}
	rows = append(rows, oneHot)

	// Row moves by index: the indices are held still, like labels.
	gather := func(in []*graph.Node) *graph.Node { return ops.Gather(in[0], in[1]) }
	scatterAdd := func(rows int) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return ops.ScatterAdd(in[0], in[1], rows) }
	}
	for _, r := range []opCase{
		row("Gather", "repeated indices", gather, v.signed(4, 3), tensorOf([]int{3}, 3, 0, 3)),
		row("Gather", "2-D indices into matrix rows", gather, v.signed(3, 2, 2), tensorOf([]int{2, 2}, 1, 1, 0, 2)),
		row("Gather", "scalar index", gather, v.signed(4, 3), tensorOf(nil, 2)),
		row("ScatterAdd", "repeated indices", scatterAdd(4), v.signed(3, 2), tensorOf([]int{3}, 3, 0, 3)),
		row("ScatterAdd", "2-D indices", scatterAdd(3), v.signed(2, 2, 3), tensorOf([]int{2, 2}, 1, 1, 0, 2)),
	} {
		r.checked, r.noGrad, r.noGradInputs = []int{0}, "indices are row indices: discrete, no gradient", []int{1}
		rows = append(rows, r)
	}
	for _, r := range []opCase{
		row("Gather", "int64 indices", gather, v.signed(4, 3), intsOf(graph.Int64, []int{2, 2}, 3, 0, 3, 1)),
		row("ScatterAdd", "int32 indices", scatterAdd(4), v.signed(3, 2), intsOf(graph.Int32, []int{3}, 3, 0, 3)),
	} {
		r.noGrad, r.noGradInputs = "indices are integers: no gradient", []int{1}
		rows = append(rows, r)
	}

	// Casts. Through float32 the inputs and the step are dyadic with few
	// bits, so that every value the finite differences visit is a float32
	// and the checks are exact.
	dyadic := tensorOf([]int{2, 3}, 0.75, -1.25, 0.5, 1.5, -0.375, 1)
	castF32 := row("Cast", "float64 through float32", func(in []*graph.Node) *graph.Node {
		return ops.Mul(ops.Cast(ops.Square(ops.Cast(in[0], graph.Float32)), graph.Float64), in[0])
	}, dyadic)
	castF32.composite, castF32.eps = true, 1.0/64
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
			rows = append(rows, row(r.name, axes.variant, func(in []*graph.Node) *graph.Node { return r.f(in[0], axes.axes...) }, v.signed(2, 3, 2)))
		}
	}

	// Shape ops.
	rows = append(rows,
		row("Reshape", "matrix", func(in []*graph.Node) *graph.Node { return ops.Reshape(in[0], 3, 2) }, v.signed(2, 3)),
		row("Reshape", "inferred dimension", func(in []*graph.Node) *graph.Node { return ops.Reshape(in[0], -1, 2) }, v.signed(6)),
		row("Reshape", "to scalar", func(in []*graph.Node) *graph.Node { return ops.Reshape(in[0]) }, v.signed(1, 1)),
		row("Transpose", "matrix", func(in []*graph.Node) *graph.Node { return ops.Transpose(in[0]) }, v.signed(2, 3)),
		row("Transpose", "rank 3", func(in []*graph.Node) *graph.Node { return ops.Transpose(in[0], 1, 2, 0) }, v.signed(2, 3, 2)),
		row("BroadcastTo", "new axis", func(in []*graph.Node) *graph.Node { return ops.BroadcastTo(in[0], 2, 3) }, v.signed(3)),
		row("BroadcastTo", "size-1 axis", func(in []*graph.Node) *graph.Node { return ops.BroadcastTo(in[0], 2, 3) }, v.signed(2, 1)),
		row("BroadcastTo", "scalar", func(in []*graph.Node) *graph.Node { return ops.BroadcastTo(in[0], 2, 2) }, v.signed()),
		row("SumTo", "leading axis", func(in []*graph.Node) *graph.Node { return ops.SumTo(in[0], 3) }, v.signed(2, 3)),
		row("SumTo", "size-1 axis", func(in []*graph.Node) *graph.Node { return ops.SumTo(in[0], 2, 1) }, v.signed(2, 3)),
		row("SumTo", "scalar", func(in []*graph.Node) *graph.Node { return ops.SumTo(in[0]) }, v.signed(2, 3)),
		row("Slice", "last axis", func(in []*graph.Node) *graph.Node { return ops.Slice(in[0], 1, 1, 3) }, v.signed(3, 4)),
		row("Slice", "negative axis", func(in []*graph.Node) *graph.Node { return ops.Slice(in[0], -2, 0, 2) }, v.signed(3, 4)),
		row("Pad", "last axis", func(in []*graph.Node) *graph.Node { return ops.Pad(in[0], 1, 1, 2) }, v.signed(2, 3)),
		row("Pad", "axis 0", func(in []*graph.Node) *graph.Node { return ops.Pad(in[0], -2, 2, 0) }, v.signed(2, 3)),
		row("Concat", "axis 0", func(in []*graph.Node) *graph.Node { return ops.Concat(0, in...) }, v.signed(1, 3), v.signed(2, 3)),
		row("Concat", "three on the last axis", func(in []*graph.Node) *graph.Node { return ops.Concat(-1, in...) },
			v.signed(2, 1), v.signed(2, 2), v.signed(2, 3)),
	)
	return rows
}

// checkCase runs a row through CheckOp, with the op taken from a node its
// builder built on a scratch graph: builders with non-tensor parameters
// (axes, shapes, constants) are checked through CheckOp like the others,
// with the op carrying the parameters the builder gave it.
func checkCase(c opCase, fast bool) error {
	if c.composite { // first and second order, as CheckOp checks
		opts := gradcheck.Options{Inputs: c.checked, Fast: fast, Eps: c.eps}
		if err := gradcheck.Check(c.build, c.inputs, opts); err != nil {
			return err
		}
		return gradcheck.GradGradCheck(c.build, c.inputs, opts)
	}
	op, err := opOf(c)
	if err != nil {
		return err
	}
	return gradcheck.CheckOp(op, c.inputs, gradcheck.Options{Inputs: c.checked, Fast: fast, Eps: c.eps})
}

// opOf builds the row on a scratch graph and returns the op of the node
// the builder returned, which must apply it to the inputs directly.
func opOf(c opCase) (graph.Op, error) {
	g := graph.New()
	xs := make([]*graph.Node, len(c.inputs))
	for i, x := range c.inputs {
		xs[i] = g.Input("x", x.Dtype(), x.Shape()...)
	}
	y := c.build(xs)
	if err := g.Err(); err != nil {
		return nil, err
	}
	if y.Op() == nil || !slices.Equal(y.Inputs(), xs) {
		return nil, fmt.Errorf("%s does not apply one op to its inputs: give its row a check of its own", c.builder)
	}
	return y.Op(), nil
}

// gradientPenalty returns ‖∇⟨w, f⟩‖² of f's gradient with respect to its
// first input, for fixed weights w.
func gradientPenalty(f func(in []*graph.Node) *graph.Node) func(in []*graph.Node) *graph.Node {
	return func(in []*graph.Node) *graph.Node {
		g := in[0].Graph()
		y := f(in)
		grads, err := compile.GradWith(ops.Sum(ops.Mul(y, g.Const(newValues(5).signed(y.Shape()...)))), in[:1], compile.ZerosIfDisconnected())
		if err != nil {
			return g.Fail(err)
		}
		return ops.Sum(ops.Square(grads[0]))
	}
}

// thirdOrder returns the scalar ⟨∇⟨w, f⟩, c⟩ of a row's gradient with
// respect to its checked inputs, with fixed w and c: GradGradCheck of it
// checks f's third derivatives.
func thirdOrder(c opCase) func(in []*graph.Node) *graph.Node {
	return func(in []*graph.Node) *graph.Node {
		g := in[0].Graph()
		y := c.build(in)
		v := newValues(3)
		var wrt []*graph.Node
		for i, x := range in {
			if c.checked == nil && graph.IsFloat(x.DType()) || slices.Contains(c.checked, i) {
				wrt = append(wrt, x)
			}
		}
		grads, err := compile.GradWith(ops.Sum(ops.Mul(y, g.Const(v.signed(y.Shape()...)))), wrt, compile.ZerosIfDisconnected())
		if err != nil {
			return g.Fail(err)
		}
		var s *graph.Node
		for _, gr := range grads {
			term := ops.Sum(ops.Mul(gr, g.Const(v.signed(gr.Shape()...))))
			if s == nil {
				s = term
			} else {
				s = ops.Add(s, term)
			}
		}
		return s
	}
}

func TestBuiltinOps(t *testing.T) {
	for _, c := range builtinTable() {
		t.Run(c.name(), func(t *testing.T) {
			err := checkCase(c, false)
			if c.stopsGradient {
				if err == nil {
					t.Fatalf("case %v: got no error, want a first-derivative mismatch (StopGradient has no gradient)", c.name())
				}
				if e := asCheckError(t, err); e.Problem != gradcheck.FirstDerivative {
					t.Fatalf("case %v: got %v, want a first-derivative mismatch", c.name(), err)
				}
			} else if err != nil {
				t.Fatalf("case %v: %v", c.name(), err)
			}
			if c.noGrad != "" {
				checkNoGradient(t, c)
			}
			// Third order wherever some input has a gradient: all inputs, or
			// the checked ones of a row whose other inputs have none.
			if !c.stopsGradient && (c.noGrad == "" || len(c.checked) > 0) {
				if err := gradcheck.GradGradCheck(thirdOrder(c), c.inputs, gradcheck.Options{Inputs: c.checked, Eps: c.eps}); err != nil {
					t.Fatalf("case %v: third order: %v", c.name(), err)
				}
			}
		})
	}
}

// checkNoGradient checks that the row's op returns no gradient for the
// inputs the table says have none, calling Backward directly.
func checkNoGradient(t *testing.T, c opCase) {
	t.Helper()
	g := graph.New()
	xs := make([]*graph.Node, len(c.inputs))
	needs := make([]bool, len(c.inputs))
	for i, x := range c.inputs {
		xs[i] = g.Input("x", x.Dtype(), x.Shape()...)
		needs[i] = true
	}
	y := c.build(xs)
	d, ok := y.Op().(graph.Differentiable)
	if !ok {
		t.Fatalf("case %v: op %s has no Backward", c.name(), y.OpName())
	}
	grads := d.Backward(graph.NewGradContext(y, needs), g.Input("g", y.DType(), y.Shape()...))
	for _, i := range c.noGradInputs {
		if i >= len(grads) || grads[i] != nil {
			t.Errorf("case %v: input %d: got a gradient, want none (%s)", c.name(), i, c.noGrad)
		}
	}
}

// TestEveryBuilderHasARow parses package ops and fails naming every
// exported function returning *graph.Node that the table does not cover:
// adding an op without a row fails this test.
func TestEveryBuilderHasARow(t *testing.T) {
	builders := opsBuilders(t)
	if len(builders) < 40 {
		t.Fatalf("found %d builders in package ops; the parse is broken", len(builders))
	}
	covered := map[string]bool{}
	for _, c := range builtinTable() {
		covered[c.builder] = true
	}
	var missing []string
	for _, b := range builders {
		if !covered[b] {
			missing = append(missing, b)
		}
		delete(covered, b)
	}
	if len(missing) > 0 {
		t.Errorf("builders of package ops with no row in builtinTable: %s", strings.Join(missing, ", "))
	}
	for b := range covered {
		t.Errorf("table row for %q, which is not a builder of package ops", b)
	}
}

// opsBuilders lists the exported functions of package ops (test files
// aside) that return a *graph.Node.
func opsBuilders(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "ops", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var names []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv == nil && fn.Name.IsExported() && returnsNode(fn.Type) {
				names = append(names, fn.Name.Name)
			}
		}
	}
	sort.Strings(names)
	return names
}

// returnsNode reports whether a function's only result is *graph.Node.
func returnsNode(ft *ast.FuncType) bool {
	if ft.Results == nil || len(ft.Results.List) != 1 || len(ft.Results.List[0].Names) > 1 {
		return false
	}
	star, ok := ft.Results.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "graph" && sel.Sel.Name == "Node"
}
