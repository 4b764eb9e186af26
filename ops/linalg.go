package ops

import (
	"fmt"
	"unsafe"

	"gonum.org/v1/gonum/blas/gonum"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// MatMulOp is the matrix product op(A)·op(B), where op transposes its
// operand when TransA or TransB is set. It multiplies 2-D matrices, batches
// of them (3-D·3-D, one product per leading index) and a batch by one
// matrix shared by every product (3-D·2-D or 2-D·3-D). The flags let the
// gradient use transposed operands without materialising them.
type MatMulOp struct {
	TransA, TransB bool
}

// MatMul returns the matrix product a·b: (m,k)·(k,n) → (m,n), batched
// (b,m,k)·(b,k,n) → (b,m,n), or a batch times one matrix,
// (b,m,k)·(k,n) → (b,m,n) (and (m,k)·(b,k,n) → (b,m,n)).
func MatMul(a, b *graph.Node) *graph.Node { return graph.Apply(MatMulOp{}, a, b) }

// MatMulT returns op(a)·op(b), where op transposes the last two axes of its
// operand when transA or transB is set, without materialising the transpose:
// MatMulT(a, b, false, true) is a·bᵀ.
func MatMulT(a, b *graph.Node, transA, transB bool) *graph.Node {
	return graph.Apply(MatMulOp{TransA: transA, TransB: transB}, a, b)
}

// Name is "MatMul" whatever the flags, so errors read the same.
func (MatMulOp) Name() string { return "MatMul" }

// matMulDims is the geometry of a (batched) product: batch products of an
// m×k by a k×n matrix; strideA and strideB are the elements between batch
// entries of each operand, 0 for a matrix shared by the whole batch.
type matMulDims struct {
	batch, m, k, n   int
	strideA, strideB int
	sharedA, sharedB bool // A or B is 2-D (the other may still be batched)
	rank             int  // of the output
}

// MatMulGeometry is a (batched) product's shape: Batch products of an
// M×K by a K×N matrix (after the transposes); StrideA and StrideB are the
// elements between batch entries of each operand, 0 for a matrix shared
// by the whole batch.
type MatMulGeometry struct {
	Batch, M, K, N   int
	StrideA, StrideB int
}

// Geometry is the product's shape for operands of shapes a and b, or why
// they do not multiply: for backends that run the product themselves.
func (op MatMulOp) Geometry(a, b []int) (MatMulGeometry, error) {
	d, err := op.dims(a, b)
	return MatMulGeometry{Batch: d.batch, M: d.m, K: d.k, N: d.n, StrideA: d.strideA, StrideB: d.strideB}, err
}

func (op MatMulOp) dims(sa, sb []int) (matMulDims, error) {
	ra, rb := len(sa), len(sb)
	if ra < 2 || rb < 2 || ra > 3 || rb > 3 {
		return matMulDims{}, fmt.Errorf("shapes %s and %s: ranks %d and %d are not supported (2-D or 3-D operands)",
			graph.ShapeString(sa), graph.ShapeString(sb), ra, rb)
	}
	m, ka := sa[ra-2], sa[ra-1]
	if op.TransA {
		m, ka = ka, m
	}
	kb, n := sb[rb-2], sb[rb-1]
	if op.TransB {
		kb, n = n, kb
	}
	if ka != kb {
		return matMulDims{}, fmt.Errorf("shapes %s and %s do not align (%d != %d)",
			graph.ShapeString(sa), graph.ShapeString(sb), ka, kb)
	}
	d := matMulDims{batch: 1, m: m, k: ka, n: n, sharedA: ra == 2, sharedB: rb == 2, rank: max(ra, rb)}
	if ra == 3 {
		d.batch, d.strideA = sa[0], m*ka
	}
	if rb == 3 {
		if ra == 3 && sb[0] != sa[0] {
			return matMulDims{}, fmt.Errorf("shapes %s and %s: batch sizes differ (%d != %d)",
				graph.ShapeString(sa), graph.ShapeString(sb), sa[0], sb[0])
		}
		d.batch, d.strideB = sb[0], ka*n
	}
	return d, nil
}

// Type checks that the operands align and infers the product's shape.
func (op MatMulOp) Type(in []graph.Type) (graph.Type, error) {
	dtype, err := graph.CheckInputs(in, 2)
	if err != nil {
		return graph.Type{}, err
	}
	d, err := op.dims(in[0].Shape, in[1].Shape)
	if err != nil {
		return graph.Type{}, err
	}
	if d.rank == 3 {
		return graph.TypeOf(dtype, d.batch, d.m, d.n), nil
	}
	return graph.TypeOf(dtype, d.m, d.n), nil
}

// Cost is 2·m·n·k flops per product (a multiply and an add for each term
// of each output element) times the batch.
func (op MatMulOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	if d, err := op.dims(in[0].Shape, in[1].Shape); err == nil {
		c.Flops = 2 * int64(d.batch) * int64(d.m) * int64(d.n) * int64(d.k)
	}
	return c
}

// Forward multiplies on the calling goroutine; see ForwardExec.
func (op MatMulOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec multiplies through the build's matrix-product kernel
// (product.run: nabla's GEMM, or OpenBLAS's with -tags openblas), one
// product per batch entry; nabla's spreads large products over e's
// threads, each element of the result computed the same way whatever
// their number.
func (op MatMulOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	return op.forward(e, out, in, false)
}

// forward computes the product into out, or adds it to out when acc.
func (op MatMulOp) forward(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense, acc bool) error {
	d, err := op.dims(in[0].Shape(), in[1].Shape())
	if err != nil {
		return err
	}
	if out.Shape().TotalSize() != d.batch*d.m*d.n {
		return fmt.Errorf("output shape %v, want %d elements", out.Shape(), d.batch*d.m*d.n)
	}
	a, b := in[0], in[1]
	op, d, swapped := op.oneProduct(d)
	if swapped {
		a, b = b, a
	}
	return forFloat(out.Dtype(),
		func() error {
			matMulKernel(e, op, d, acc, floats[float32](out), floats[float32](a), floats[float32](b))
			return nil
		},
		func() error {
			matMulKernel(e, op, d, acc, floats[float64](out), floats[float64](a), floats[float64](b))
			return nil
		})
}

// oneProduct rewrites a batch of products that share one operand as a
// single product, where the batch's layout allows, so that it runs as one
// GEMM rather than a product (often a matrix–vector product) per entry:
//   - a batch of A by one B is one product with batch·m rows, when the
//     rows of A's entries are stored one after another (A not
//     transposed, or one row each);
//   - one A by a batch of column vectors, op(A)·x_i, is the batch of rows
//     x_iᵀ stacked times op(A)ᵀ: a batch·k by k×m product whose output,
//     batch rows of m, is the batch of (m, 1) columns as stored. The
//     operands swap (swapped), and so do the transposes.
//
// Each element of the output is then computed as the GEMM computes that
// element of the stacked product, the way the same function written with
// rows (x·W) computes it.
func (op MatMulOp) oneProduct(d matMulDims) (MatMulOp, matMulDims, bool) {
	switch {
	case d.batch == 1:
	case d.sharedB && (!op.TransA || d.m == 1):
		// A row stored transposed (k×1) is the same k elements.
		op.TransA = false
		d.m, d.batch, d.strideA = d.batch*d.m, 1, 0
	case d.sharedA && d.n == 1:
		op = MatMulOp{TransB: !op.TransA}
		d = matMulDims{batch: 1, m: d.batch, k: d.k, n: d.m, rank: d.rank}
		return op, d, true
	}
	return op, d, false
}

func matMulKernel[T float](e *graph.Exec, op MatMulOp, d matMulDims, acc bool, c, a, b []T) {
	if d.batch == 0 {
		return
	}
	last := d.batch - 1
	p := product[T]{
		transA: op.TransA, transB: op.TransB, acc: acc, m: d.m, n: d.n, k: d.k,
		a: a[:last*d.strideA+d.m*d.k],
		b: b[:last*d.strideB+d.k*d.n],
		c: c[:d.batch*d.m*d.n],
	}
	if d.batch == 1 {
		p.run(e)
		return
	}
	p.runBatch(e, d.batch, d.strideA, d.strideB)
}

// Backward uses C = op(A)·op(B) ⇒ d op(A) = G·op(B)ᵀ and d op(B) = op(A)ᵀ·G,
// transposed back through the flags when op transposes. Where one operand
// is shared by a batch, its gradient sums over the batch.
func (op MatMulOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	a, b := ctx.Input(0), ctx.Input(1)
	grads := make([]*graph.Node, 2)
	if ctx.NeedsGrad(0) {
		if op.TransA {
			grads[0] = MatMulT(b, g, op.TransB, true)
		} else {
			grads[0] = MatMulT(g, b, false, !op.TransB)
		}
		if a.Type().Rank() < g.Type().Rank() {
			grads[0] = SumTo(grads[0], a.Shape()...)
		}
	}
	if ctx.NeedsGrad(1) {
		switch {
		case b.Type().Rank() < a.Type().Rank() && !op.TransA:
			// Flatten the batch into rows: one product, no batch sum.
			rows, k, n := a.Shape()[0]*a.Shape()[1], b.Shape()[0], b.Shape()[1]
			if op.TransB {
				k, n = n, k
			}
			x, y := Reshape(a, rows, k), Reshape(g, rows, n)
			if op.TransB {
				x, y = y, x
			}
			grads[1] = MatMulT(x, y, true, false)
		case op.TransB:
			grads[1] = MatMulT(g, a, true, op.TransA)
		default:
			grads[1] = MatMulT(a, g, !op.TransA, false)
		}
		if b.Type().Rank() < grads[1].Type().Rank() {
			grads[1] = SumTo(grads[1], b.Shape()...)
		}
	}
	return grads
}

// JVP is the product rule, dA·B + A·dB. Batched tangents of 2-D operands
// are batches of products sharing the other operand; those of 3-D
// operands would need 4-D products, and the rule declines them.
func (op MatMulOp) JVP(c *graph.JVPContext) *graph.Node {
	a, b := c.Input(0), c.Input(1)
	if c.Batch() > 0 && (a.Type().Rank() > 2 || b.Type().Rank() > 2) {
		c.Decline()
		return nil
	}
	var da, db *graph.Node
	if t := c.Tangent(0); t != nil {
		da = MatMulT(t, b, op.TransA, op.TransB)
	}
	if t := c.Tangent(1); t != nil {
		db = MatMulT(a, t, op.TransA, op.TransB)
	}
	return addTangents(da, db)
}

// Batch multiplies each example's matrices: a batch of A by a shared B
// is one product of the examples' rows stacked, (B·m)×k by k×n; other
// batches of matrices are products batched along the leading axis; and
// examples that are already batches of products (3-D operands) fold the
// batch into theirs.
func (op MatMulOp) Batch(c *graph.BatchContext) *graph.Node {
	if exampleRank(c, 0) == 2 && exampleRank(c, 1) == 2 {
		if c.Batched(0) && !c.Batched(1) && !op.TransA {
			return Reshape(graph.Apply(op, stackRows(c.Input(0)), c.Input(1)), c.Shape(c.Example().Shape())...)
		}
		return graph.Apply(op, c.Input(0), c.Input(1))
	}
	return Reshape(graph.Apply(op, foldBatch(c, 0), foldBatch(c, 1)), c.Shape(c.Example().Shape())...)
}

// foldBatch is matrix operand i of a product whose examples are batches
// of lead products (3-D): the batch of examples folded into each
// example's, (B·lead, rows, columns), or one shared matrix as it is.
func foldBatch(c *graph.BatchContext, i int) *graph.Node {
	if exampleRank(c, i) == 2 && !c.Batched(i) {
		return c.Input(i) // one matrix for every product
	}
	lead := c.Example().Shape()[0]
	x := batchedInput(c, i)
	s := x.Shape()
	if exampleRank(c, i) == 2 {
		x = BroadcastTo(Reshape(x, s[0], 1, s[1], s[2]), s[0], lead, s[1], s[2])
	}
	return Reshape(x, append([]int{c.Size() * lead}, s[len(s)-2:]...)...)
}

// exampleRank is the rank of one example of input i of a batching rule.
func exampleRank(c *graph.BatchContext, i int) int {
	r := c.Input(i).Type().Rank()
	if c.Batched(i) {
		r--
	}
	return r
}

// stackRows is a batch of matrices, (B, m, k), as one (B·m, k) matrix.
func stackRows(a *graph.Node) *graph.Node {
	s := a.Shape()
	return Reshape(a, s[0]*s[1], s[2])
}

// product is one product C = op(A)·op(B), or C += op(A)·op(B) when acc, on
// row-major backing slices: C is m×n, k the inner dimension. A is stored
// m×k (k×m if transA), B k×n (n×k if transB). Its run method is the
// build's kernel: nabla's own (linalg_gemm.go, over internal/kernel/gemm), or
// OpenBLAS's gemm with -tags openblas (linalg_openblas.go).
type product[T float] struct {
	transA, transB bool
	acc            bool
	m, n, k        int
	a, b, c        []T
}

var blasImpl gonum.Implementation

// blasAxpy is y += alpha·x[0:n·incX:incX] through gonum's Saxpy or Daxpy
// (which skip alpha == 0, as BLAS's gemm does).
func blasAxpy[T float](n int, alpha T, x []T, incX int, y []T) {
	if unsafe.Sizeof(alpha) == 4 {
		blasImpl.Saxpy(n, float32(alpha), asFloat32s(x), incX, asFloat32s(y), 1)
		return
	}
	blasImpl.Daxpy(n, float64(alpha), asFloat64s(x), incX, asFloat64s(y), 1)
}

// asFloat32s and asFloat64s view a []T of the matching size as the
// concrete slice type gonum wants, without copying.
func asFloat32s[T float](x []T) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

func asFloat64s[T float](x []T) []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

// MatMulAddOp is op(A)·op(B) + C in one kernel: C (its third input, of
// the product's shape or broadcasting to it) is written into the output
// and the product accumulated onto it, so the sum costs no pass of its
// own. The compiler makes it from an Add of a MatMul that nothing else
// reads; the output may overwrite C's buffer (InPlace).
type MatMulAddOp struct {
	TransA, TransB bool
}

// MatMulAdd returns op(a)·op(b) + c, transposing as MatMulT does; c must
// broadcast to the product's shape.
func MatMulAdd(a, b, c *graph.Node, transA, transB bool) *graph.Node {
	return graph.Apply(MatMulAddOp{TransA: transA, TransB: transB}, a, b, c)
}

// Name is "MatMulAdd".
func (MatMulAddOp) Name() string { return "MatMulAdd" }

func (op MatMulAddOp) product() MatMulOp { return MatMulOp(op) }

// Product is the product op(a)·op(b) the op adds c to.
func (op MatMulAddOp) Product() MatMulOp { return op.product() }

// Type is the product's type; c must have its dtype and broadcast to it.
func (op MatMulAddOp) Type(in []graph.Type) (graph.Type, error) {
	if err := graph.CheckArity(in, 3); err != nil {
		return graph.Type{}, err
	}
	t, err := op.product().Type(in[:2])
	if err != nil {
		return graph.Type{}, err
	}
	if _, err := graph.CheckInputs([]graph.Type{t, in[2]}, 2); err != nil {
		return graph.Type{}, err
	}
	if err := broadcastsTo(in[2].Shape, t.Shape); err != nil {
		return graph.Type{}, fmt.Errorf("addend: %v", err)
	}
	return t, nil
}

// Cost is the product's plus one flop per output element.
func (op MatMulAddOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	c := op.product().Cost(in[:2], out)
	c.Flops += int64(out.Size())
	c.BytesRead += graph.DefaultCost(in[2:]).BytesRead
	return c
}

// InPlace lets the output overwrite the addend.
func (MatMulAddOp) InPlace() int { return 2 }

// Forward computes the sum on the calling goroutine; see ForwardExec.
func (op MatMulAddOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.ForwardExec(nil, out, in)
}

// ForwardExec writes the addend into the output (broadcasting it, and not
// at all when the output is the addend's own buffer) and accumulates the
// product onto it.
func (op MatMulAddOp) ForwardExec(e *graph.Exec, out *tensor.Dense, in []*tensor.Dense) error {
	if !sameBuffer(out, in[2]) {
		if err := (broadcastToOp{}).Forward(out, in[2:]); err != nil {
			return err
		}
	}
	return op.product().forward(e, out, in[:2], true)
}

// Backward is MatMul's for A and B; C's gradient is the output's, summed
// to C's shape by the differentiation driver.
func (op MatMulAddOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	grads := op.product().Backward(ctx, g)
	if ctx.NeedsGrad(2) {
		return append(grads, g)
	}
	return append(grads, nil)
}

// JVP is MatMul's plus the addend's tangent.
func (op MatMulAddOp) JVP(c *graph.JVPContext) *graph.Node {
	product := op.product().JVP(c)
	if c.Declined() {
		return nil
	}
	return addTangents(product, aligned(c, 2))
}

// Batch is MatMul's, adding the addend as the product is formed: where
// the product stacks the examples' rows, a shared addend must broadcast
// to the stack (a row), or the product is batched along the leading axis
// instead, the addend broadcast to every product.
func (op MatMulAddOp) Batch(c *graph.BatchContext) *graph.Node {
	a, b, add := c.Input(0), c.Input(1), c.Input(2)
	out := c.Shape(c.Example().Shape())
	if exampleRank(c, 0) == 3 || exampleRank(c, 1) == 3 {
		add = Reshape(BroadcastTo(alignedBatch(c, 2, 3), out...), append([]int{c.Size() * out[1]}, out[2:]...)...)
		return Reshape(graph.Apply(op, foldBatch(c, 0), foldBatch(c, 1), add), out...)
	}
	rowAddend := !c.Batched(2) && (add.Type().Rank() < 2 || add.Shape()[0] == 1)
	switch {
	case c.Batched(0) && !c.Batched(1) && !op.TransA && rowAddend:
		return Reshape(graph.Apply(op, stackRows(a), b, add), out...)
	case !c.Batched(0) && !c.Batched(1):
		a = batchedInput(c, 0) // only the addend is batched
	}
	return graph.Apply(op, a, b, alignedBatch(c, 2, 2))
}

// sameBuffer reports whether a and b are the same elements of one buffer
// (an output computed in place over an input). An empty a is: there is
// nothing to copy into it (and no first element to take the address of).
func sameBuffer(a, b *tensor.Dense) bool {
	if graph.ShapeSize(a.Shape()) == 0 {
		return true
	}
	return a.DataSize() == b.DataSize() && a.Uintptr() == b.Uintptr()
}
