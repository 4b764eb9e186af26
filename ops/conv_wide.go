package ops

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/gemm"
)

// Without stride or padding, output row i of a convolution reads, for
// each tap (c, p, q), the input run x[c, i+p·dh, q·dw : q·dw+ow]: as many
// runs as output rows, each a short copy for the unfolding (LeNet's are 8
// to 24 elements, which cost far more to hand to copy than to copy). The
// wide unfolding takes, for each tap, the one run of (oh-1)·w + ow
// elements from x[c, p·dh, q·dw] on: the product then computes the
// outputs at every column j < w of each output row (the last w - ow of
// them are thrown away) and its rows are copied out row by row. It
// trades those extra columns of the product (w/ow of the work) for many
// fewer, longer copies, and runs a chunk of images as one product.

// wideMaxRun is the longest output row (ow) that the wide unfolding is
// used for, and wideChunk the elements of unfolding a chunk of images
// aims at (half a megabyte of float32, within a core's L2 cache):
// LeNet's second convolution ran 10% faster than with a quarter of it.
const (
	wideMaxRun = 32
	wideChunk  = 1 << 17
)

// wideN is the columns of one image's wide unfolding.
func (g geom) wideN() int { return (g.oh-1)*g.w + g.ow }

// wide reports whether the forward convolution unfolds wide: no stride or
// padding, short output rows, and at most half as much work again; not
// for groups without input channels, whose unfolding is empty.
func (g geom) wide() bool {
	return g.stride == [2]int{1, 1} && g.pad == [4]int{} && !g.direct() && g.cg > 0 &&
		g.ow <= wideMaxRun && 2*g.wideN() <= 3*g.oh*g.ow && g.k()*g.wideN() <= wideChunk*4
}

// wideImages is how many images a chunk of the wide unfolding holds.
func (g geom) wideImages() int {
	return max(1, min(g.n, wideChunk/(g.k()*g.wideN())))
}

// wideUnits is the chunks of images the wide forward kernel hands out.
func (g geom) wideUnits() int {
	nb := g.wideImages()
	return (g.n + nb - 1) / nb
}

// wideBuffers sizes part's unfolding and product for a chunk of images.
func (r *convRun[T]) wideBuffers(part int) {
	g := r.g
	cols := g.wideImages() * g.wideN()
	r.cols[part] = grow(r.cols[part], g.k()*cols)
	r.prods[part] = grow(r.prods[part], g.og*cols)
}

// wideUnit computes the forward convolution of chunk u of the images,
// group by group: the wide unfolding of its images side by side, one
// product with the group's weight, and the product's rows copied out.
func (r *convRun[T]) wideUnit(e *graph.Exec, part, u int) {
	g := r.g
	nb := g.wideImages()
	n0, n1 := u*nb, min((u+1)*nb, g.n)
	hw, ohw, k, wn := g.h*g.w, g.oh*g.ow, g.k(), g.wideN()
	cols := (n1 - n0) * wn
	col, prod := r.cols[part][:k*cols], r.prods[part][:g.og*cols]
	for grp := range g.groups {
		for n := n0; n < n1; n++ {
			x := r.x[(n*g.c+grp*g.cg)*hw : (n*g.c+grp*g.cg+g.cg)*hw]
			at := (n - n0) * wn
			row := 0
			for c := range g.cg {
				for p := range g.kh {
					for q := range g.kw {
						off := c*hw + p*g.dilation[0]*g.w + q*g.dilation[1]
						copy(col[row*cols+at:row*cols+at+wn], x[off:off+wn])
						row++
					}
				}
			}
		}
		w := r.w[grp*g.og*k : (grp+1)*g.og*k]
		gemm.Mul(e.Kernel(), gemm.Product{M: g.og, N: cols, K: k, Lda: k, Ldb: cols, Ldc: cols}, w, col, prod)
		for n := n0; n < n1; n++ {
			for o := range g.og {
				y := r.y[(n*g.o+grp*g.og+o)*ohw : (n*g.o+grp*g.og+o+1)*ohw]
				src := prod[o*cols+(n-n0)*wn:]
				for i := range g.oh {
					copy(y[i*g.ow:(i+1)*g.ow], src[i*g.w:])
				}
			}
		}
	}
}
