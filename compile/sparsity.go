package compile

import (
	"fmt"
	"slices"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Pattern is the sparsity pattern of a Jacobian or Hessian, in compressed
// sparse row form: row i's possibly nonzero columns are
// Cols[RowStart[i]:RowStart[i+1]], in increasing order. Rows and columns
// are the flat (row-major) indices of the output's and the input's
// elements.
type Pattern struct {
	Rows, Columns int
	RowStart      []int
	Cols          []int
}

// NNZ is the number of entries that may be nonzero.
func (p *Pattern) NNZ() int { return len(p.Cols) }

// maxRow is the most entries a row has.
func (p *Pattern) maxRow() int {
	k := 0
	for i := range p.Rows {
		k = max(k, p.RowStart[i+1]-p.RowStart[i])
	}
	return k
}

// Has reports whether entry (i, j) may be nonzero.
func (p *Pattern) Has(i, j int) bool {
	_, ok := slices.BinarySearch(p.Cols[p.RowStart[i]:p.RowStart[i+1]], j)
	return ok
}

// Dense returns the Rows×Columns matrix, row-major, holding values (one
// per entry of the pattern, in its order) and zeros elsewhere.
func (p *Pattern) Dense(values []float64) []float64 {
	d := make([]float64, p.Rows*p.Columns)
	for i := range p.Rows {
		for k := p.RowStart[i]; k < p.RowStart[i+1]; k++ {
			d[i*p.Columns+p.Cols[k]] = values[k]
		}
	}
	return d
}

// ColorColumns colours the pattern's columns so that no two columns of one
// colour have an entry in a common row (greedy distance-1 colouring of the
// column intersection graph, columns in order): one product per colour
// then recovers every entry. It returns each column's colour and the
// number of colours; a nil or malformed pattern (one StarColor refuses)
// has none: nil and 0.
func ColorColumns(p *Pattern) (colors []int, n int) {
	if checkPattern(p) != nil {
		return nil, 0
	}
	rowsOf := make([][]int, p.Columns)
	for i := range p.Rows {
		for _, j := range p.Cols[p.RowStart[i]:p.RowStart[i+1]] {
			rowsOf[j] = append(rowsOf[j], i)
		}
	}
	colors = make([]int, p.Columns)
	for j := range colors {
		colors[j] = -1
	}
	var taken []int // taken[c] == j+1: colour c is used by a neighbour of j
	for j := range p.Columns {
		for _, i := range rowsOf[j] {
			for _, k := range p.Cols[p.RowStart[i]:p.RowStart[i+1]] {
				if c := colors[k]; c >= 0 {
					taken[c] = j + 1
				}
			}
		}
		c := 0
		for c < len(taken) && taken[c] == j+1 {
			c++
		}
		if c == len(taken) {
			taken = append(taken, 0)
		}
		colors[j] = c
		n = max(n, c+1)
	}
	return colors, n
}

// Sparse is a sparse Jacobian or Hessian: its pattern, a node holding the
// values of the pattern's entries in its order (so it compiles and
// differentiates like any node), and the number of colours, that is of
// compressed products, it was computed with.
type Sparse struct {
	Pattern *Pattern
	Values  *graph.Node
	Colors  int
}

// SparseJacobian returns the Jacobian of y with respect to x as a Sparse:
// its pattern (JacobianPattern), columns coloured (ColorColumns), one
// Jacobian–vector product per colour with the sum of the colour's unit
// vectors (all of them in one forward sweep, as a batch of tangents), and
// the entries gathered from those products. A banded Jacobian costs as
// many products as its band is wide, whatever its size. The pattern's
// errors are JacobianPattern's; seeds for the colours (at least as many
// as a row has entries) past graph.MemoryLimit are an error too, found
// before colouring.
func SparseJacobian(y, x *graph.Node) (*Sparse, error) {
	fail := failer("SparseJacobian", graph.CallerSite())
	if err := checkDerivative(fail, y, x); err != nil {
		return nil, err
	}
	p, err := jacobianPattern(fail, insteadOfSparseJ, y, x)
	if err != nil {
		return nil, err
	}
	// A row of k entries takes k colours, so k seeds of x's size: check
	// them before colouring, which takes time k² for that row.
	if k := p.maxRow(); k > 0 {
		what := fmt.Sprintf("the seeds of at least %d colours (a row of the pattern has %d entries)", k, k)
		if err := checkBytes(fail, what, x.DType(), joinShapes([]int{k}, x.Shape()), insteadOfSparseJ); err != nil {
			return nil, err
		}
	}
	colors, nc := ColorColumns(p)
	return compressed(fail, "SparseJacobian", y, x, p, colors, nc, columnGather(p, colors))
}

// SparseHessian returns the Hessian of the scalar f with respect to x as a
// Sparse: the pattern of the gradient's Jacobian, its columns coloured,
// one Hessian–vector product (forward over reverse) per colour, and the
// entries read from the products.
//
// The colouring is StarColor's, each entry read from its row's product
// or, by symmetry, its column's. A distance-1 colouring (ColorColumns)
// ignores the symmetry: with the diagonal in the pattern it is a
// distance-2 colouring of the adjacency graph, so a dense row and column
// (an arrowhead) costs a colour per column where a star colouring takes two. But where the pattern's
// diagonal is empty (bilinear terms: x₀x₁ has the Hessian [[0 1] [1 0]])
// columns that never share a row may share a colour even if adjacent,
// which a star colouring forbids; both are cheap next to the products, so
// SparseHessian computes both and uses ColorColumns' when it has fewer
// colours.
func SparseHessian(f, x *graph.Node) (*Sparse, error) {
	fail := failer("SparseHessian", graph.CallerSite())
	if err := checkHessian(fail, "SparseHessian", f, x); err != nil {
		return nil, err
	}
	gr, err := grad("SparseHessian", []*graph.Node{f}, nil, []*graph.Node{x}, nil)
	if err != nil {
		return nil, err
	}
	p, err := jacobianPattern(fail, insteadOfSparseH, gr[0], x)
	if err != nil {
		return nil, err
	}
	colors, nc, err := StarColor(p)
	if err != nil {
		return nil, err
	}
	// ColorColumns needs at least as many colours as a row has entries:
	// where that is no fewer than StarColor's, it cannot win.
	if p.maxRow() >= nc {
		return compressed(fail, "SparseHessian", gr[0], x, p, colors, nc, symmetricGather(p, colors, nc))
	}
	if c1, n1 := ColorColumns(p); n1 < nc {
		return compressed(fail, "SparseHessian", gr[0], x, p, c1, n1, columnGather(p, c1))
	}
	return compressed(fail, "SparseHessian", gr[0], x, p, colors, nc, symmetricGather(p, colors, nc))
}

// compressed computes, for caller, the entries of y's Jacobian in pattern
// p from one JVP per colour of p's columns (one batched sweep), each
// column's seed being 1 in its colour's direction; entry k is element
// at[k] of the products, product c holding c·p.Rows through
// (c+1)·p.Rows−1. The seeds and the products, nc times x's and y's
// elements, must fit the memory limit.
func compressed(fail func(string, ...any) error, caller string, y, x *graph.Node, p *Pattern, colors []int, nc int, at []int64) (*Sparse, error) {
	g := y.Graph()
	m := p.Rows
	if p.NNZ() == 0 || nc == 0 {
		return &Sparse{Pattern: p, Values: g.Const(graph.NewDense(y.DType(), 0)), Colors: nc}, g.Err()
	}
	instead := insteadOfSparseJ
	if caller == "SparseHessian" {
		instead = insteadOfSparseH
	}
	for _, t := range []struct {
		what string
		of   *graph.Node
	}{{"seeds", x}, {"products", y}} {
		what := fmt.Sprintf("the %d colours' %s", nc, t.what)
		shape := joinShapes([]int{nc}, t.of.Shape())
		if err := checkRank(fail, what, shape); err != nil {
			return nil, err
		}
		if err := checkBytes(fail, what, t.of.DType(), shape, instead); err != nil {
			return nil, err
		}
	}
	// One sweep carries every colour's seed, the sum of its columns' unit
	// vectors, as a batch of tangents.
	seeds := graph.NewDense(x.DType(), append([]int{nc}, x.Shape()...)...)
	n := x.Type().Size()
	for j, c := range colors {
		graph.SetFloat(seeds, c*n+j, 1)
	}
	products, err := batchedJVP(caller, y, x, seeds, nc)
	if err != nil {
		return nil, err
	}
	idx, err := graph.FromInt64s(graph.Int64, at, len(at))
	if err != nil {
		return nil, err
	}
	values := ops.Gather(ops.Reshape(products, nc*m), g.Const(idx))
	return &Sparse{Pattern: p, Values: values, Colors: nc}, g.Err()
}

// columnGather is, for each entry (i, j) of p in order, row i of colour
// colors[j]'s product: the direct recovery of a distance-1 colouring.
func columnGather(p *Pattern, colors []int) []int64 {
	at := make([]int64, 0, p.NNZ())
	for i := range p.Rows {
		for _, j := range p.Cols[p.RowStart[i]:p.RowStart[i+1]] {
			at = append(at, int64(colors[j]*p.Rows+i))
		}
	}
	return at
}
