package cuda

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// matMul plans op(a)·op(b) into the output (added to it when acc) as one
// cuBLAS product, batched where the operands are.
func (l *lowering) matMul(op ops.MatMulOp, acc bool) error {
	g, err := op.Geometry(l.inT[0].Shape, l.inT[1].Shape)
	if err != nil {
		return err
	}
	call := rowMajorGemm(op, g, l.outT[0].DType == graph.Float32)
	if acc {
		call.beta = 1
	}
	l.p.steps = append(l.p.steps, step{kind: stepGemm, args: []ref{l.in[1], l.in[0], l.out[0]}, gemm: call})
	return nil
}

// rowMajorGemm maps a row-major product C = op(A)·op(B) onto cuBLAS's
// column-major gemm: a row-major matrix is its transpose in column-major
// order, so the call computes Cᵀ = op(B)ᵀ·op(A)ᵀ, B first. The returned
// call's a is the product's B and its b the product's A: a step passes
// them in that order.
func rowMajorGemm(op ops.MatMulOp, g ops.MatMulGeometry, f32 bool) gemmCall {
	if g.StrideB == 0 && g.Batch > 1 && !op.TransA {
		// A batch times one matrix is one product of Batch·M rows.
		g.M, g.Batch, g.StrideA = g.M*g.Batch, 1, 0
	}
	ldb, lda := g.N, g.K // stored row lengths of B (K×N) and A (M×K)
	if op.TransB {
		ldb = g.K // B stored N×K
	}
	if op.TransA {
		lda = g.M // A stored K×M
	}
	c := gemmCall{
		f32: f32, transA: op.TransB, transB: op.TransA,
		m: g.N, n: g.M, k: g.K,
		lda: max(ldb, 1), ldb: max(lda, 1), ldc: max(g.N, 1),
		strideA: int64(g.StrideB), strideB: int64(g.StrideA),
		batch: g.Batch,
	}
	if g.Batch > 1 {
		c.strideC = int64(g.M) * int64(g.N)
	}
	return c
}
