package nn

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Embedding maps integer indices to learned vectors: row i of its weight
// is the vector of index i.
type Embedding struct {
	Weight *graph.Node // (num, dim)
	num    int
	dim    int
	name   string
}

// NewEmbedding adds to g the weight ("name.weight", (num, dim), normal with
// deviation 1 as in PyTorch unless WithInit says otherwise) of an embedding
// of num indices into dim dimensions.
func NewEmbedding(g *graph.Graph, name string, num, dim int, opts ...Option) *Embedding {
	b := newBuilder(g, "Embedding", name, Normal(0, 1), nil, opts)
	e := &Embedding{num: num, dim: dim, name: b.name}
	if num <= 0 || dim <= 0 {
		e.Weight = b.fail("num %d and dim %d must be positive", num, dim)
		return e
	}
	e.Weight = b.param("weight", b.o.weightInit, num, dim, num, dim)
	return e
}

// Forward looks up the vectors of indices, a node of any shape holding
// values in [0, num) (int32 or int64, or integers held as floats of the
// weight's dtype), giving shape indices.shape ++ (dim).
// An index out of range fails the run with an error naming it.
//
// The lookup is ops.Gather, whose gradient (ops.ScatterAdd) adds into the
// looked-up rows alone: a step costs the batch's rows, not the table's.
func (e *Embedding) Forward(indices *graph.Node) *graph.Node {
	if e == nil || e.Weight == nil {
		return unmade(indices, "Embedding", "NewEmbedding")
	}
	return inScope(indices, "Embedding", e.name, func() *graph.Node { return ops.Gather(e.Weight, indices) })
}

// Describe gives the embedding's sizes, as PyTorch prints them.
func (e *Embedding) Describe() string {
	return fmt.Sprintf("%d, %d", e.num, e.dim)
}

// String prints the module as a tree (see Format).
func (e *Embedding) String() string { return Format(e) }

// Name is the name the module was made with, which prefixes its
// parameters' names.
func (e *Embedding) Name() string {
	if e == nil {
		return ""
	}
	return e.name
}
