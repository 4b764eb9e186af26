package ops

import (
	"fmt"
	"math/bits"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/gemm"
)

// MaxSharedRows is the most products a SharedMatMulOp computes together.
const MaxSharedRows = gemm.MaxRows

// SharedMatMulOp is several products of a row by one matrix, a_i·B (plus
// an addend c_i where bit i of Addends is set), computed together: B, read
// once for all of them, is often most of what the products cost. A
// network's input and its tangent through one weight (the Hessian–vector
// product's x·W and v·W) are such products. The compiler makes it from
// MatMul and MatMulAdd values that share their right operand; each output
// is computed with the operations of the product it replaces, bit for bit.
//
// Its inputs are the Rows rows a_i, each (1, k), then B, (k, n), as
// stored, then the addends of the outputs that have one, in order, each
// broadcasting to (1, n); its outputs are the Rows products, each (1, n).
type SharedMatMulOp struct {
	Rows    int   // 2 to MaxSharedRows
	Addends uint8 // bit i: output i has an addend
}

// Name is "SharedMatMul".
func (SharedMatMulOp) Name() string { return "SharedMatMul" }

// inputs is the number of inputs the op takes.
func (op SharedMatMulOp) inputs() int { return op.Rows + 1 + bits.OnesCount8(op.Addends) }

// Types checks the rows, the matrix and the addends and gives each
// output's type.
func (op SharedMatMulOp) Types(in []graph.Type) ([]graph.Type, error) {
	if op.Rows < 2 || op.Rows > MaxSharedRows || op.Addends>>op.Rows != 0 {
		return nil, fmt.Errorf("%d rows with addends %b: want 2 to %d rows, addends among them", op.Rows, op.Addends, MaxSharedRows)
	}
	dtype, err := graph.CheckInputs(in, op.inputs())
	if err != nil {
		return nil, err
	}
	b := in[op.Rows].Shape
	if len(b) != 2 {
		return nil, fmt.Errorf("matrix of shape %s: want 2-D", graph.ShapeString(b))
	}
	for i, a := range in[:op.Rows] {
		if len(a.Shape) != 2 || a.Shape[0] != 1 || a.Shape[1] != b[0] {
			return nil, fmt.Errorf("row %d of shape %s: want (1,%d) to multiply a matrix of shape %s", i, graph.ShapeString(a.Shape), b[0], graph.ShapeString(b))
		}
	}
	out := graph.TypeOf(dtype, 1, b[1])
	for i, c := range in[op.Rows+1:] {
		if err := broadcastsTo(c.Shape, out.Shape); err != nil {
			return nil, fmt.Errorf("addend %d: %v", i, err)
		}
	}
	outs := make([]graph.Type, op.Rows)
	for i := range outs {
		outs[i] = out
	}
	return outs, nil
}

// Forward writes each output's addend into it, or zeros, and accumulates
// the products onto them together (gemm.MulRows): each element is the
// chain of operations MatMulAdd, or MatMul, computes for that row alone.
func (op SharedMatMulOp) Forward(out []*tensor.Dense, in []*tensor.Dense) error {
	if len(out) != op.Rows || len(in) != op.inputs() {
		return fmt.Errorf("%d outputs and %d inputs, want %d and %d", len(out), len(in), op.Rows, op.inputs())
	}
	b := in[op.Rows]
	k, n := b.Shape()[0], b.Shape()[1]
	next := op.Rows + 1
	for i, o := range out {
		if o.Shape().TotalSize() != n || in[i].Shape().TotalSize() != k {
			return fmt.Errorf("row %d: %v by %v into %v", i, in[i].Shape(), b.Shape(), o.Shape())
		}
		if op.Addends&(1<<i) == 0 {
			continue // zeroed by sharedRows
		}
		if !sameBuffer(o, in[next]) {
			if err := (broadcastToOp{}).Forward(o, in[next:next+1]); err != nil {
				return err
			}
		}
		next++
	}
	return forFloat(b.Dtype(),
		func() error { return sharedRows[float32](out, in[:op.Rows], b, k, n, op.Addends) },
		func() error { return sharedRows[float64](out, in[:op.Rows], b, k, n, op.Addends) })
}

// sharedRows zeros the outputs without an addend and accumulates the
// rows' products by b onto every output.
func sharedRows[T float](out, rows []*tensor.Dense, b *tensor.Dense, k, n int, addends uint8) error {
	var a, c [gemm.MaxRows][]T
	for i := range rows {
		a[i], c[i] = floats[T](rows[i]), floats[T](out[i])
		if addends&(1<<i) == 0 {
			clear(c[i])
		}
	}
	sharedProducts(len(rows), k, n, &a, floats[T](b), &c)
	return nil
}

// Decompose is the products one by one, for backends without the op.
func (op SharedMatMulOp) Decompose(in []*graph.Node) ([]*graph.Node, error) {
	outs := make([]*graph.Node, op.Rows)
	b, next := in[op.Rows], op.Rows+1
	for i := range outs {
		if op.Addends&(1<<i) == 0 {
			outs[i] = MatMul(in[i], b)
			continue
		}
		outs[i] = MatMulAdd(in[i], b, in[next], false, false)
		next++
	}
	return outs, nil
}
