package cuda

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// colBytes bounds the memory of a convolution's columns (see
// ops.ConvProducts): the images are taken in chunks whose columns fit,
// one image at least. The columns live in the plan's scratch buffer.
var colBytes int64 = 64 << 20

// convProducts plans a convolution as products (ops.ConvProducts), a
// chunk of images at a time: the unfolding kernel into the columns, then
// a product per group, strided-batched over the chunk's images; or the
// products into the columns, then the folding kernel.
func (l *lowering) convProducts(c ops.ConvProducts) {
	dtype := l.outT[0].DType
	size := int64(dtype.Size())
	chunk := int(max(1, min(int64(c.Images), colBytes/(c.ColsImage*size))))
	cols := l.p.scratchOf((int64(chunk)*c.ColsImage*size + 7) / 8)
	at := func(r ref, elems int64) ref { return ref{buf: r.buf, off: r.off + elems*size} }
	f32 := dtype == graph.Float32
	flat := func(n int64) []graph.Type { return []graph.Type{{DType: dtype, Shape: []int{int(n)}}} }
	for b := 0; b < c.Images; b += chunk {
		images := min(chunk, c.Images-b)
		in, out := at(l.in[0], int64(b)*c.In), at(l.out[0], int64(b)*c.Out)
		rearrange := func(from, to ref, n, m int64) {
			sub := &lowering{p: l.p, in: []ref{from}, out: []ref{to}, inT: flat(n), outT: flat(m), node: l.node}
			sub.kernels([]graph.CUDASource{c.ColKernel(images)})
		}
		if c.Forward {
			rearrange(in, cols, int64(images)*c.In, int64(images)*c.ColsImage)
		}
		for g := range c.Groups {
			gk, gp := int64(g)*int64(c.K), int64(g)*int64(c.OG)
			w := at(l.in[1], gp*int64(c.K))
			call := gemmCall{f32: f32, m: c.P, k: c.K, n: c.OG, lda: c.P, ldb: c.K, ldc: c.P,
				strideA: c.ColsImage, strideC: c.Out, batch: images}
			args := []ref{at(cols, gk*int64(c.P)), w, at(out, gp*int64(c.P))}
			if !c.Forward {
				// Colᵀ = GYᵀ·W, column-major: W (OG × K, row-major) is
				// read transposed.
				call = gemmCall{f32: f32, transB: true, m: c.P, k: c.OG, n: c.K, lda: c.P, ldb: c.K, ldc: c.P,
					strideA: c.In, strideC: c.ColsImage, batch: images}
				args = []ref{at(in, gp*int64(c.P)), w, at(cols, gk*int64(c.P))}
			}
			if images == 1 {
				call.strideA, call.strideC = 0, 0
			}
			l.p.steps = append(l.p.steps, step{kind: stepGemm, args: args, gemm: call})
		}
		if !c.Forward {
			rearrange(cols, out, int64(images)*c.ColsImage, int64(images)*c.Out)
		}
	}
}
