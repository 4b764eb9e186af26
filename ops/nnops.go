package ops

import (
	"fmt"
	"math"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vek"
	"github.com/nabla-go/nabla/internal/kernel/vmath"
)

// softmaxOp normalises exponentials along one axis; with log set it is
// log-softmax.
type softmaxOp struct {
	axis int // in [0, rank)
	log  bool
}

// Softmax returns exp(x) / sum(exp(x)) along axis (negative axes count from
// the end). It subtracts the maximum first, so large inputs do not overflow.
func Softmax(x *graph.Node, axis int) *graph.Node { return softmax(x, axis, false) }

// LogSoftmax returns x - LogSumExp(x) along axis (negative axes count from
// the end), computed stably: it never takes the log of a softmax that has
// underflowed to 0.
func LogSoftmax(x *graph.Node, axis int) *graph.Node { return softmax(x, axis, true) }

func softmax(x *graph.Node, axis int, log bool) *graph.Node {
	op := softmaxOp{log: log}
	if p := poisoned(op.Name(), x); p != nil {
		return p
	}
	a, err := graph.NormalizeAxis(axis, x.Type().Rank())
	if err != nil {
		return failBuilder(op.Name(), err, x)
	}
	op.axis = a
	return graph.Apply(op, x)
}

func (op softmaxOp) Name() string {
	if op.log {
		return "LogSoftmax"
	}
	return "Softmax"
}

func (op softmaxOp) Type(in []graph.Type) (graph.Type, error) {
	dtype, err := graph.CheckInputs(in, 1)
	if err != nil {
		return graph.Type{}, err
	}
	if _, err := graph.NormalizeAxis(op.axis, in[0].Rank()); err != nil {
		return graph.Type{}, err
	}
	return graph.TypeOf(dtype, in[0].Shape...), nil
}

func (op softmaxOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	outer, n, inner := splitAxis(in[0].Shape(), op.axis)
	return forFloat(in[0].Dtype(),
		func() error {
			softmaxKernel(floats[float32](out), floats[float32](in[0]), outer, n, inner, op.log)
			return nil
		},
		func() error {
			softmaxKernel(floats[float64](out), floats[float64](in[0]), outer, n, inner, op.log)
			return nil
		})
}

// Backward, with y the output: softmax's Jacobian-vector product is
// y*(g - sum(g*y)); log-softmax's is g - exp(y)*sum(g), sums along the
// axis. Along the last axis softmax's is one op, softmaxGrad, with the
// same bits.
func (op softmaxOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	if !ctx.NeedsGrad(0) {
		return []*graph.Node{nil}
	}
	y := ctx.Output()
	switch {
	case op.log:
		return []*graph.Node{Sub(g, Mul(Exp(y), SumKeepDims(g, op.axis)))}
	case op.axis == y.Type().Rank()-1:
		return []*graph.Node{softmaxGrad(y, g)}
	}
	return []*graph.Node{softmaxGradOf(y, g, op.axis)}
}

// JVP, with y the output and t the tangent along the axis: softmax's is
// y*(t - sum(y*t)), log-softmax's t - sum(exp(y)*t).
func (op softmaxOp) JVP(c *graph.JVPContext) *graph.Node {
	t := c.Tangent(0)
	if t == nil {
		return nil
	}
	y, axis := c.Output(), c.Axis(op.axis, 0)
	if op.log {
		return Sub(t, SumKeepDims(Mul(Exp(y), t), axis))
	}
	return Mul(y, Sub(t, SumKeepDims(Mul(y, t), axis)))
}

// Batch normalises each example along the same axis.
func (op softmaxOp) Batch(c *graph.BatchContext) *graph.Node {
	if !batchable(c) {
		return nil
	}
	return softmax(c.Input(0), op.axis+1, op.log)
}

// splitAxis views shape as (outer, n, inner) around axis: the elements along
// the axis sit inner apart.
func splitAxis(shape []int, axis int) (outer, n, inner int) {
	outer, inner = 1, 1
	for _, d := range shape[:axis] {
		outer *= d
	}
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	return outer, shape[axis], inner
}

func softmaxKernel[T float](out, x []T, outer, n, inner int, log bool) {
	if inner == 1 {
		if !log && n > 0 && n <= softmaxBlock {
			softmaxRows(out, x, outer, n)
			return
		}
		for o := range outer {
			softmaxRow(out[o*n:(o+1)*n], x[o*n:(o+1)*n], log)
		}
		return
	}
	for o := range outer {
		for i := range inner {
			base := o*n*inner + i
			if !log {
				_, s := expSum(out, x, base, n, inner)
				for k := range n {
					out[base+k*inner] /= T(s)
				}
				continue
			}
			m, s := expSum(nil, x, base, n, inner)
			shift := m + math.Log(s)
			for k := range n {
				j := base + k*inner
				out[j] = T(float64(x[j]) - shift)
			}
		}
	}
}

// softmaxBlock is how many elements softmaxRows exponentiates at once.
const softmaxBlock = 4 * wideBlock

// softmaxVectorDiv is the row length from which softmaxRows divides with
// one vector loop rather than element by element: shorter rows spend
// more on the call than they save.
const softmaxVectorDiv = 24

// softmaxRows is softmaxKernel along contiguous rows of n ≤ softmaxBlock
// elements: as many rows as fit in a block share one call of vmath.Exp64,
// which short rows (attention's, of 16) would otherwise each make for
// themselves. Each element is computed as expSum computes it, so the
// results are the same bits. A row whose maximum is finite leaves its
// trailing -Inf (a causal mask's) out of the block: their exponentials are
// exactly 0, add nothing to the sum (at least 1, the maximum's), and give
// probabilities of exactly 0. The divisions of a long row run as one
// vector loop, which rounds each quotient as the scalar one does.
func softmaxRows[T float](out, x []T, rows, n int) {
	var buf, sums [softmaxBlock]float64
	var live [softmaxBlock]int32 // each row's length without its trailing -Inf
	per := softmaxBlock / n
	for r0 := 0; r0 < rows; r0 += per {
		rs := min(per, rows-r0)
		xs, ys := x[r0*n:(r0+rs)*n], out[r0*n:(r0+rs)*n]
		at := 0
		for r := range rs {
			row := xs[r*n : (r+1)*n]
			l := trailingNegInf(row)
			// With a finite maximum before them the trailing -Inf do
			// not change it; otherwise the whole row is taken.
			m := float64(rowPeak(row[:l]))
			if math.Abs(m) > math.MaxFloat64 || m != m {
				l = len(row)
				m = float64(rowPeak(row))
			}
			live[r] = int32(l)
			b := buf[at : at+l]
			for k, v := range row[:l] {
				b[k] = float64(v) - m
			}
			at += l
		}
		b := buf[:at]
		vmath.Exp64(b, b)
		sumsInOrder(sums[:rs], b, live[:rs])
		at = 0
		for r := range rs {
			l := int(live[r])
			row, y := b[at:at+l], ys[r*n:(r+1)*n]
			at += l
			if l < softmaxVectorDiv {
				s := T(sums[r])
				for k, e := range row {
					y[k] = T(e) / s
				}
			} else {
				for k, e := range row {
					y[k] = T(e)
				}
				vek.VS(vek.Div, y[:l], y[:l], T(sums[r]))
			}
			clear(y[l:])
		}
	}
}

// trailingNegInf is the length of row without its trailing run of -Inf,
// found four elements at a time.
func trailingNegInf[T float](row []T) int {
	ninf := T(math.Inf(-1))
	l := len(row)
	for ; l >= 4; l -= 4 {
		q := row[l-4 : l : l]
		if q[0] != ninf || q[1] != ninf || q[2] != ninf || q[3] != ninf {
			break
		}
	}
	for l > 0 && row[l-1] == ninf {
		l--
	}
	return l
}

// rowMax is the maximum of row in float64, NaN if it holds one (maxNaN's
// rule), -Inf if it is empty.
func rowMax[T float](row []T) float64 {
	m := math.Inf(-1)
	for _, v := range row {
		m = maxNaN(m, float64(v))
	}
	return m
}

// rowPeak is row's maximum, NaN if it holds one, -Inf if it is empty
// (vek.Max: 8 lanes of VMAXPS for float32 on amd64, else four running
// maxima in T; no conversion an element, no branch). Unlike rowMax,
// between +0 and -0 it may return either: a softmax subtracts it from
// each element and exponentiates, and exp(v - (+0)) = exp(v - (-0)) for
// every v, so the probabilities are the same bits as rowMax's.
func rowPeak[T float](row []T) T { return vek.Max(row) }

// softmaxRow is softmaxKernel on one contiguous row x (the softmax axis
// last): the same operations in the same order, so the same bits, without
// the strided indexing. When the maximum m is a number above -Inf, a
// trailing run of -Inf (a causal mask's) has exp(-Inf - m) = 0 exactly,
// which adds nothing to the sum: their exponentials are not computed.
func softmaxRow[T float](out, x []T, log bool) {
	m := rowMax(x)
	n := len(x)
	if m > math.Inf(-1) {
		for n > 0 && math.IsInf(float64(x[n-1]), -1) {
			n--
		}
	}
	var buf [wideBlock]float64
	var sum float64
	for start := 0; start < n; start += wideBlock {
		b := buf[:min(wideBlock, n-start)]
		for i, v := range x[start : start+len(b)] {
			b[i] = float64(v) - m
		}
		vmath.Exp64(b, b)
		if !log {
			o := out[start : start+len(b)]
			for i, e := range b {
				o[i] = T(e)
			}
		}
		for _, e := range b {
			sum += e
		}
	}
	if log {
		shift := m + math.Log(sum)
		for i, v := range x {
			out[i] = T(float64(v) - shift)
		}
		return
	}
	clear(out[n:])
	vek.VS(vek.Div, out, out, T(sum))
}

// expSum returns the maximum m of the n elements of x starting at base,
// stride apart, and the sum of their exp(x - m) (in float64); it writes each
// exp(x - m) at the same place in dst when dst is not nil. Subtracting m
// keeps every exponential at most 1, so nothing overflows. The
// exponentials are taken a block of wideBlock at a time by vmath.
func expSum[T float](dst, x []T, base, n, stride int) (m, sum float64) {
	m = math.Inf(-1)
	for k := range n {
		m = maxNaN(m, float64(x[base+k*stride]))
	}
	var buf [wideBlock]float64
	for start := 0; start < n; start += wideBlock {
		b := buf[:min(wideBlock, n-start)]
		for i := range b {
			b[i] = float64(x[base+(start+i)*stride]) - m
		}
		vmath.Exp64(b, b)
		for i, e := range b {
			if dst != nil {
				dst[base+(start+i)*stride] = T(e)
			}
			sum += e
		}
	}
	return m, sum
}

// crossEntropyOp is the softmax cross-entropy of logits (N,C) against
// integer class labels (N).
type crossEntropyOp struct{}

// CrossEntropy returns the per-example softmax cross-entropy losses (N) of
// logits (N,C) against labels (N) holding class indices (int32 or int64,
// or float values of the logits' dtype): loss_i = LogSumExp(logits_i) - logits_i[label_i]. A label that is not an
// integer in [0,C) makes the run fail with an error naming it (on a GPU,
// whose kernels cannot fail, it makes the example's loss NaN). Labels get
// no gradient.
func CrossEntropy(logits, labels *graph.Node) *graph.Node {
	y := graph.Apply(crossEntropyOp{}, logits, labels)
	if y.Err() != nil || labels.Kind() != graph.KindConst {
		return y
	}
	// Constant labels are checked now, so that a bad one is reported here
	// rather than by the gradient's one-hot encoding at compile time.
	data, classes := indicesOf(labels.Value()), logits.Shape()[1]
	for i := range data.len() {
		if _, err := classIndex(data, classes, i); err != nil {
			return y.Graph().Fail(&graph.Error{Op: "CrossEntropy", Err: err, Site: graph.CallerSite()})
		}
	}
	return y
}

func (crossEntropyOp) Name() string { return "CrossEntropy" }

func (crossEntropyOp) Type(in []graph.Type) (graph.Type, error) {
	dtype, err := checkIndexed(in, "labels")
	if err != nil {
		return graph.Type{}, err
	}
	logits, labels := in[0], in[1]
	if logits.Rank() != 2 {
		return graph.Type{}, fmt.Errorf("logits must be (N,C), got %s", graph.ShapeString(logits.Shape))
	}
	n, c := logits.Shape[0], logits.Shape[1]
	if labels.Rank() != 1 || labels.Shape[0] != n {
		return graph.Type{}, fmt.Errorf("labels must be (%d) for logits %s, got %s",
			n, graph.ShapeString(logits.Shape), graph.ShapeString(labels.Shape))
	}
	if c == 0 {
		return graph.Type{}, fmt.Errorf("logits %s have no classes", graph.ShapeString(logits.Shape))
	}
	return graph.TypeOf(dtype, n), nil
}

func (crossEntropyOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	c, labels := in[0].Shape()[1], indicesOf(in[1])
	return forFloat(in[0].Dtype(),
		func() error {
			return crossEntropyKernel(floats[float32](out), floats[float32](in[0]), labels, c)
		},
		func() error {
			return crossEntropyKernel(floats[float64](out), floats[float64](in[0]), labels, c)
		})
}

// crossEntropyKernel sets out[i] to example i's loss, m + log Σ exp(x -
// m) - x[label] with m the row's maximum, in float64 (expSum); rows of at
// most softmaxBlock classes go through crossEntropyRows, which gives the
// same bits.
func crossEntropyKernel[T float](out, logits []T, labels indexData, classes int) error {
	if classes <= softmaxBlock {
		return crossEntropyRows(out, logits, labels, classes)
	}
	return crossEntropyEach(out, logits, labels, classes)
}

// crossEntropyEach is crossEntropyKernel one row at a time.
func crossEntropyEach[T float](out, logits []T, labels indexData, classes int) error {
	for i := range labels.len() {
		c, err := classIndex(labels, classes, i)
		if err != nil {
			return err
		}
		m, s := expSum(nil, logits, i*classes, classes, 1)
		out[i] = T(m + math.Log(s) - float64(logits[i*classes+c]))
	}
	return nil
}

// Backward: d loss_i/d logits_i = softmax(logits_i) - onehot(label_i),
// scaled by the example's output gradient; labels get none.
func (crossEntropyOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	if !ctx.NeedsGrad(0) {
		return []*graph.Node{nil, nil}
	}
	logits, labels := ctx.Input(0), ctx.Input(1)
	n, c := logits.Shape()[0], logits.Shape()[1]
	return []*graph.Node{Mul(Sub(Softmax(logits, 1), OneHot(labels, c, logits.DType())), Reshape(g, n, 1)), nil}
}

// Batch takes each example's losses: the batch folds into the rows.
func (op crossEntropyOp) Batch(c *graph.BatchContext) *graph.Node { return rowsBatch(c, op, 0, 1) }

// classIndex checks that label i is a class index in [0,classes).
func classIndex(labels indexData, classes, i int) (int, error) {
	c, ok := labels.at(i, classes)
	if !ok {
		return 0, fmt.Errorf("label %s at index %d is not a class index in [0,%d)", labels.format(i), i, classes)
	}
	return c, nil
}

// crossEntropyOneHotOp is the softmax cross-entropy of logits (N,C) against
// target distributions (N,C).
type crossEntropyOneHotOp struct{}

// CrossEntropyOneHot returns the per-example softmax cross-entropy losses
// (N) of logits (N,C) against targets (N,C) holding one-hot rows or
// probabilities: loss_i = -sum_c target_ic * LogSoftmax(logits)_ic. Classes
// with a zero target add nothing, even where a logit is -Inf. It is
// differentiable in both inputs.
func CrossEntropyOneHot(logits, target *graph.Node) *graph.Node {
	return graph.Apply(crossEntropyOneHotOp{}, logits, target)
}

func (crossEntropyOneHotOp) Name() string { return "CrossEntropyOneHot" }

func (crossEntropyOneHotOp) Type(in []graph.Type) (graph.Type, error) {
	dtype, err := graph.CheckInputs(in, 2)
	if err != nil {
		return graph.Type{}, err
	}
	logits, target := in[0], in[1]
	if logits.Rank() != 2 {
		return graph.Type{}, fmt.Errorf("logits must be (N,C), got %s", graph.ShapeString(logits.Shape))
	}
	if !slices.Equal(target.Shape, logits.Shape) {
		return graph.Type{}, fmt.Errorf("target must have the logits' shape %s, got %s",
			graph.ShapeString(logits.Shape), graph.ShapeString(target.Shape))
	}
	return graph.TypeOf(dtype, logits.Shape[0]), nil
}

func (crossEntropyOneHotOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	c := in[0].Shape()[1]
	return forFloat(in[0].Dtype(),
		func() error {
			crossEntropyOneHotKernel(floats[float32](out), floats[float32](in[0]), floats[float32](in[1]), c)
			return nil
		},
		func() error {
			crossEntropyOneHotKernel(floats[float64](out), floats[float64](in[0]), floats[float64](in[1]), c)
			return nil
		})
}

func crossEntropyOneHotKernel[T float](out, logits, target []T, classes int) {
	for i := range out {
		row := i * classes
		m, s := expSum(nil, logits, row, classes, 1)
		lse := m + math.Log(s)
		loss := 0.0
		for c, t := range target[row : row+classes] {
			if t != 0 {
				loss += float64(t) * (lse - float64(logits[row+c]))
			}
		}
		out[i] = T(loss)
	}
}

// Backward: with p = softmax(logits) and s_i the sum of target row i,
// d loss_i/d logits_i = p_i*s_i - target_i and d loss_i/d target_i =
// -log_softmax(logits_i), each scaled by the example's output gradient.
func (crossEntropyOneHotOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	logits, target := ctx.Input(0), ctx.Input(1)
	gcol := Reshape(g, logits.Shape()[0], 1)
	grads := make([]*graph.Node, 2)
	if ctx.NeedsGrad(0) {
		grads[0] = Mul(gcol, Sub(Mul(Softmax(logits, 1), SumKeepDims(target, 1)), target))
	}
	if ctx.NeedsGrad(1) {
		grads[1] = Neg(Mul(gcol, LogSoftmax(logits, 1)))
	}
	return grads
}

// Batch takes each example's losses: the batch folds into the rows.
func (op crossEntropyOneHotOp) Batch(c *graph.BatchContext) *graph.Node {
	return rowsBatch(c, op, 0, 1)
}
