package cuda

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// colBytes bounds the memory of a convolution's columns (see
// ops.ConvProducts), and of the weight gradient's shares: the images
// are taken in chunks whose columns fit, one image at least. They live
// in the plan's scratch buffer.
var colBytes int64 = 64 << 20

// convProducts plans a convolution as products (ops.ConvProducts), a
// chunk of images at a time: the unfolding kernel into the columns, then
// a product per group, strided-batched over the chunk's images (then,
// for the weight gradient, the sum of the images' shares); or, for the
// input gradient, the products into the columns, then the folding
// kernel.
func (l *lowering) convProducts(c ops.ConvProducts) {
	dtype := l.outT[0].DType
	size := int64(dtype.Size())
	perImage := c.ColsImage
	if c.Kind == ops.ConvWeightProducts {
		perImage += c.Weights() // the image's share, after the columns
	}
	chunk := int(max(1, min(int64(c.Images), colBytes/(perImage*size))))
	cols := l.p.scratchOf((int64(chunk)*perImage*size + 7) / 8)
	shares := ref{buf: cols.buf, off: int64(chunk) * c.ColsImage * size}
	at := func(r ref, elems int64) ref { return ref{buf: r.buf, off: r.off + elems*size} }
	flat := func(n int64) []graph.Type { return []graph.Type{{DType: dtype, Shape: []int{int(n)}}} }
	kernel := func(src graph.CUDASource, from, to ref, n, m int64) {
		sub := &lowering{p: l.p, in: []ref{from}, out: []ref{to}, inT: flat(n), outT: flat(m), node: l.node}
		sub.kernels([]graph.CUDASource{src})
	}
	for b := 0; b < c.Images; b += chunk {
		images := min(chunk, c.Images-b)
		n := int64(images)
		if c.Kind != ops.ConvInputProducts {
			kernel(c.ColKernel(images), at(l.in[0], int64(b)*c.X), cols, n*c.X, n*c.ColsImage)
		}
		for g := range c.Groups {
			l.p.steps = append(l.p.steps, convProduct(c, l, b, images, g, cols, shares))
		}
		switch c.Kind {
		case ops.ConvInputProducts:
			kernel(c.ColKernel(images), cols, at(l.out[0], int64(b)*c.X), n*c.ColsImage, n*c.X)
		case ops.ConvWeightProducts:
			kernel(c.SumKernel(images, b == 0), shares, l.out[0], n*c.Weights(), c.Weights())
		}
	}
}

// convProduct is the step of group g's products for images [b,
// b+images): in cuBLAS's column-major terms, with row-major matrices
// read as their transposes, Yᵀ = Colᵀ·Wᵀ, Colᵀ = GYᵀ·W, or the images'
// shares Sᵀ = Col·GYᵀ.
func convProduct(c ops.ConvProducts, l *lowering, b, images, g int, cols, shares ref) step {
	size := int64(l.outT[0].DType.Size())
	at := func(r ref, elems int64) ref { return ref{buf: r.buf, off: r.off + elems*size} }
	gk, gp := int64(g)*int64(c.K), int64(g)*int64(c.OG) // the group's first row of Col and of W, Y
	colsG := at(cols, gk*int64(c.P))
	call := gemmCall{f32: l.outT[0].DType == graph.Float32, batch: images, lda: c.P, ldb: c.K, ldc: c.P}
	var args []ref
	switch c.Kind {
	case ops.ConvForwardProducts:
		call.m, call.n, call.k = c.P, c.OG, c.K
		call.strideA, call.strideC = c.ColsImage, c.Y
		args = []ref{colsG, at(l.in[1], gp*int64(c.K)), at(l.out[0], int64(b)*c.Y+gp*int64(c.P))}
	case ops.ConvInputProducts:
		call.transB, call.m, call.n, call.k = true, c.P, c.K, c.OG
		call.strideA, call.strideC = c.Y, c.ColsImage
		args = []ref{at(l.in[0], int64(b)*c.Y+gp*int64(c.P)), at(l.in[1], gp*int64(c.K)), colsG}
	default:
		call.transA, call.m, call.n, call.k = true, c.K, c.OG, c.P
		call.ldb, call.ldc = c.P, c.K
		call.strideA, call.strideB, call.strideC = c.ColsImage, c.Y, c.Weights()
		args = []ref{colsG, at(l.in[1], int64(b)*c.Y+gp*int64(c.P)), at(shares, gp*int64(c.K))}
	}
	if images == 1 {
		call.strideA, call.strideB, call.strideC = 0, 0, 0
	}
	return step{kind: stepGemm, args: args, gemm: call}
}
