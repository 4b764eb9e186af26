package ops

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// The matrix helpers of torch.linalg and torch: triangles, diagonals,
// traces and the identity. Each works on the last two axes of its input
// (the matrices) and is batched over the axes before them; their gradients
// are each other (Tril's is Tril, Diagonal's is DiagEmbed and DiagEmbed's
// is Diagonal), so they differentiate to any order.

// matrices splits a shape of rank ≥ 2 into the number of matrices (the
// product of the leading axes) and each one's rows and columns.
func matrices(shape []int) (batch, rows, cols int) {
	r := len(shape)
	return graph.ShapeSize(shape[:r-2]), shape[r-2], shape[r-1]
}

// matrixInput checks that an op has one float input of rank 2 to maxRank,
// a batch of matrices, and returns its type.
func matrixInput(in []graph.Type) (graph.Type, error) {
	x, err := singleInput(in)
	if err != nil {
		return graph.Type{}, err
	}
	if x.Rank() < 2 {
		return graph.Type{}, fmt.Errorf("shape %s is not a matrix or a batch of matrices (rank ≥ 2)", graph.ShapeString(x.Shape))
	}
	return x, checkRank(in)
}

// squareMatrices checks that an op has one input, a batch of square
// matrices, and returns its type.
func squareMatrices(in []graph.Type) (graph.Type, error) {
	a, err := matrixInput(in)
	if err != nil {
		return graph.Type{}, err
	}
	if r := a.Rank(); a.Shape[r-2] != a.Shape[r-1] {
		return graph.Type{}, fmt.Errorf("shape %s: the matrices are not square", graph.ShapeString(a.Shape))
	}
	return a, nil
}

// triangleOp keeps the elements on and below the k-th diagonal (Tril) or on
// and above it (Triu) and zeroes the others. Diagonal k is the elements
// (i, i+k): 0 is the main diagonal, positive ones lie above it.
type triangleOp struct {
	upper bool
	k     int
}

// Tril returns the lower triangle of each matrix of x (its last two axes)
// on and below diagonal k, the other elements zero: torch.tril. Diagonal 0
// is the main one, k > 0 lies above it and k < 0 below.
func Tril(x *graph.Node, k int) *graph.Node { return graph.Apply(triangleOp{k: k}, x) }

// Triu returns the upper triangle of each matrix of x on and above
// diagonal k, the other elements zero: torch.triu.
func Triu(x *graph.Node, k int) *graph.Node { return graph.Apply(triangleOp{upper: true, k: k}, x) }

// Name is "Tril" or "Triu".
func (op triangleOp) Name() string {
	if op.upper {
		return "Triu"
	}
	return "Tril"
}

// Type is x's: a batch of matrices.
func (triangleOp) Type(in []graph.Type) (graph.Type, error) { return matrixInput(in) }

// keeps reports whether element (i, j) is in the triangle.
func (op triangleOp) keeps(i, j int) bool {
	if op.upper {
		return j-i >= op.k
	}
	return j-i <= op.k
}

// Forward copies the triangle of each matrix and zeroes the rest.
func (op triangleOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	batch, rows, cols := matrices(in[0].Shape())
	return forFloat(out.Dtype(),
		func() error {
			triangleKernel(op, floats[float32](out), floats[float32](in[0]), batch, rows, cols)
			return nil
		},
		func() error {
			triangleKernel(op, floats[float64](out), floats[float64](in[0]), batch, rows, cols)
			return nil
		})
}

func triangleKernel[T float](op triangleOp, out, x []T, batch, rows, cols int) {
	for b := range batch {
		for i := range rows {
			o := (b*rows + i) * cols
			for j := range cols {
				if op.keeps(i, j) {
					out[o+j] = x[o+j]
				} else {
					out[o+j] = 0
				}
			}
		}
	}
}

// Backward masks the gradient with the same triangle.
func (op triangleOp) Backward(_ *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{graph.Apply(op, g)}
}

// JVP masks the tangent (its batch axis is one more leading axis).
func (op triangleOp) JVP(c *graph.JVPContext) *graph.Node {
	if t := c.Tangent(0); t != nil {
		return graph.Apply(op, t)
	}
	return nil
}

// Batch masks each example: the batch is one more leading axis.
func (op triangleOp) Batch(c *graph.BatchContext) *graph.Node { return leadingBatch(c, op) }

// Deps: the same element, where the triangle keeps it.
func (op triangleOp) Deps(in []graph.Type, _ graph.Type, e int, read func(input, elem int)) {
	_, rows, cols := matrices(in[0].Shape)
	if op.keeps(e/cols%rows, e%cols) {
		read(0, e)
	}
}

type diagonalOp struct{}

// Diagonal returns the main diagonal of each matrix of x (its last two
// axes): (…, n, m) → (…, min(n, m)), as torch.diagonal(x, 0, -2, -1).
func Diagonal(x *graph.Node) *graph.Node { return graph.Apply(diagonalOp{}, x) }

// Name is "Diagonal".
func (diagonalOp) Name() string { return "Diagonal" }

// Type drops the last axis and makes the one before it min(n, m) long.
func (diagonalOp) Type(in []graph.Type) (graph.Type, error) {
	x, err := matrixInput(in)
	if err != nil {
		return graph.Type{}, err
	}
	r := x.Rank()
	shape := append([]int(nil), x.Shape[:r-1]...)
	shape[r-2] = min(x.Shape[r-2], x.Shape[r-1])
	return x.WithShape(shape...), nil
}

// Forward reads each matrix's elements (i, i).
func (diagonalOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	batch, rows, cols := matrices(in[0].Shape())
	return forFloat(out.Dtype(),
		func() error {
			diagonalKernel(floats[float32](out), floats[float32](in[0]), batch, rows, cols)
			return nil
		},
		func() error {
			diagonalKernel(floats[float64](out), floats[float64](in[0]), batch, rows, cols)
			return nil
		})
}

func diagonalKernel[T float](out, x []T, batch, rows, cols int) {
	d := min(rows, cols)
	for b := range batch {
		for i := range d {
			out[b*d+i] = x[b*rows*cols+i*cols+i]
		}
	}
}

// Backward places the gradient on the diagonal of zero matrices of the
// input's shape: DiagEmbed, padded with zero rows or columns when the
// matrices are not square.
func (diagonalOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	shape := ctx.Input(0).Shape()
	rows, cols := shape[len(shape)-2], shape[len(shape)-1]
	d := min(rows, cols)
	gx := DiagEmbed(g)
	if rows > d {
		gx = Pad(gx, -2, 0, rows-d)
	}
	if cols > d {
		gx = Pad(gx, -1, 0, cols-d)
	}
	return []*graph.Node{gx}
}

// JVP takes the tangent's diagonal.
func (diagonalOp) JVP(c *graph.JVPContext) *graph.Node {
	if t := c.Tangent(0); t != nil {
		return Diagonal(t)
	}
	return nil
}

// Batch takes each example's diagonal: the batch is one more leading axis.
func (op diagonalOp) Batch(c *graph.BatchContext) *graph.Node { return leadingBatch(c, op) }

// Deps: output element (b, i) reads element (b, i, i).
func (diagonalOp) Deps(in []graph.Type, out graph.Type, e int, read func(input, elem int)) {
	_, rows, cols := matrices(in[0].Shape)
	d := out.Shape[out.Rank()-1]
	b, i := e/d, e%d
	read(0, b*rows*cols+i*cols+i)
}

type diagEmbedOp struct{}

// DiagEmbed returns matrices with v's last axis on their diagonals and
// zeros elsewhere: (…, n) → (…, n, n), as torch.diag_embed(v).
func DiagEmbed(v *graph.Node) *graph.Node { return graph.Apply(diagEmbedOp{}, v) }

// Name is "DiagEmbed".
func (diagEmbedOp) Name() string { return "DiagEmbed" }

// Type repeats the last axis.
func (diagEmbedOp) Type(in []graph.Type) (graph.Type, error) {
	v, err := singleInput(in)
	if err != nil {
		return graph.Type{}, err
	}
	if v.Rank() < 1 || v.Rank() >= maxRank {
		return graph.Type{}, fmt.Errorf("shape %s: DiagEmbed takes a rank from 1 to %d", graph.ShapeString(v.Shape), maxRank-1)
	}
	return v.WithShape(append(append([]int(nil), v.Shape...), v.Shape[v.Rank()-1])...), nil
}

// Forward zeroes each matrix and writes its diagonal.
func (diagEmbedOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	shape := in[0].Shape()
	n := shape[len(shape)-1]
	batch := graph.ShapeSize(shape[:len(shape)-1])
	return forFloat(out.Dtype(),
		func() error { diagEmbedKernel(floats[float32](out), floats[float32](in[0]), batch, n); return nil },
		func() error { diagEmbedKernel(floats[float64](out), floats[float64](in[0]), batch, n); return nil })
}

func diagEmbedKernel[T float](out, v []T, batch, n int) {
	clear(out)
	for b := range batch {
		for i := range n {
			out[b*n*n+i*n+i] = v[b*n+i]
		}
	}
}

// Backward takes the gradient's diagonal.
func (diagEmbedOp) Backward(_ *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{Diagonal(g)}
}

// JVP embeds the tangent.
func (diagEmbedOp) JVP(c *graph.JVPContext) *graph.Node {
	if t := c.Tangent(0); t != nil {
		return DiagEmbed(t)
	}
	return nil
}

// Batch embeds each example's diagonal: the batch is one more leading axis.
func (op diagEmbedOp) Batch(c *graph.BatchContext) *graph.Node { return leadingBatch(c, op) }

// Deps: a diagonal element (b, i, i) reads element (b, i); the others none.
func (diagEmbedOp) Deps(_ []graph.Type, out graph.Type, e int, read func(input, elem int)) {
	n := out.Shape[out.Rank()-1]
	b, i, j := e/(n*n), e/n%n, e%n
	if i == j {
		read(0, b*n+i)
	}
}

// Trace returns the sum of the main diagonal of each matrix of x (its
// last two axes): (…, n, m) → (…), as torch.trace for a matrix, batched.
func Trace(x *graph.Node) *graph.Node {
	if p := checkAs("Trace", diagonalOp{}, x); p != nil {
		return p
	}
	d := Diagonal(x)
	if graph.Poisoned(d) != nil {
		return d
	}
	return Sum(d, -1)
}

// Eye returns the n×n identity matrix of dtype (float32 or float64) as a
// constant of g: torch.eye(n).
func Eye(g *graph.Graph, dtype tensor.Dtype, n int) *graph.Node {
	var err error
	switch {
	case !graph.IsFloat(dtype):
		err = fmt.Errorf("dtype %s is not supported (float32 or float64)", dtypeName(dtype))
	case n < 0:
		err = fmt.Errorf("size %d is negative", n)
	case g == nil:
		err = fmt.Errorf("the graph is nil: make one with graph.New")
	default:
		_, err = graph.Bytes(dtype, []int{n, n}, 0) // before allocating it
	}
	if err != nil {
		return g.Fail(&graph.Error{Op: "Eye", Err: err, Site: graph.CallerSite()})
	}
	eye := graph.NewDense(dtype, n, n)
	for i := range n {
		graph.SetFloat(eye, i*n+i, 1)
	}
	return g.Const(eye)
}
