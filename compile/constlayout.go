package compile

import (
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// constlayout stores transposed the constant matrices that products read
// transposed (a fixed network's weights in a gradient, W·x's backward
// g·Wᵀ): the transpose is taken once, at compile time, and the product
// reads its operand as stored, which the matrix kernels do faster than
// packing it transposed at every run. A constant read both ways is kept
// both ways; one bigger than constant folding keeps is left alone. Values
// do not change: the product computes the same sums either way.
func constlayout(f *function) error {
	transposed := map[*value]*value{}
	var fresh []*value
	flip := func(c *value) *value {
		if t, ok := transposed[c]; ok {
			return t
		}
		t := &value{node: c.node, kind: graph.KindConst, typ: c.typ.WithShape(c.typ.Shape[1], c.typ.Shape[0]), konst: transpose2D(c.konst), slot: -1}
		transposed[c] = t
		fresh = append(fresh, t)
		return t
	}
	fits := func(a *value) bool {
		return a.kind == graph.KindConst && a.konst != nil && a.typ.Rank() == 2 && a.typ.Size() <= maxFolded
	}
	relayout := func(v *value, transA, transB *bool) {
		for i, trans := range []*bool{transA, transB} {
			if *trans && fits(v.args[i]) {
				v.args[i], *trans = flip(v.args[i]), false
			}
		}
	}
	for _, v := range f.values {
		switch op := v.op.(type) {
		case ops.MatMulOp:
			relayout(v, &op.TransA, &op.TransB)
			v.op = op
		case ops.MatMulAddOp:
			relayout(v, &op.TransA, &op.TransB)
			v.op = op
		}
	}
	f.values = append(fresh, f.values...) // constants read nothing: first is in order
	return nil
}

// transpose2D returns a matrix's transpose, a new tensor.
func transpose2D(m *tensor.Dense) *tensor.Dense {
	shape := m.Shape()
	rows, cols := shape[0], shape[1]
	t := graph.NewDense(m.Dtype(), cols, rows)
	for i := range rows {
		for j := range cols {
			graph.SetFloat(t, j*rows+i, graph.Float(m, i*cols+j))
		}
	}
	return t
}
