package ops

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// convProductDepth is the least depth (terms of each output's sum) for
// which a GPU computes a convolution as matrix products rather than with
// its direct kernel.
const convProductDepth = 32

// ConvProducts is a convolution a GPU computes as matrix products, image
// by image and group by group, around a kernel rearranging the images
// (im2col), as the CPU does. An image's columns Col, for a group, are a
// K × P matrix: a row per kernel tap of each of the group's input
// channels (K = C/groups·kH·kW), a column per output position (P =
// H'·W'); the columns of an image are its groups' in turn, those of
// several images one image's after another. Per image and group, with W
// the group's weights (OG × K) and GY its OG output channels (OG × P):
//
//   - Conv2D unfolds the image into its columns, then Y = W·Col;
//   - the input gradient (and ConvTranspose2D) takes Col = Wᵀ·GY, then
//     folds the columns into the image, adding the taps that read each
//     element;
//   - the weight gradient unfolds the image, takes the image's share
//     GY·Colᵀ, then adds the images' shares (SumKernel).
type ConvProducts struct {
	Kind      ConvProductsKind
	Images    int   // images in the batch
	Groups    int   // groups of channels
	OG, K, P  int   // per group: output channels, rows and columns of Col
	X, Y      int64 // elements of one image of the convolution's input x and output y
	ColsImage int64 // elements of one image's columns, all groups'

	g geom
}

// ConvProductsKind is the member of the convolution family ConvProducts
// computes.
type ConvProductsKind int

// The members of the convolution family.
const (
	ConvForwardProducts ConvProductsKind = iota // Conv2D: in0 is x, in1 w, out0 y
	ConvInputProducts                           // its input gradient: in0 is gy, in1 w, out0 x
	ConvWeightProducts                          // its weight gradient: in0 is x, in1 gy, out0 w
)

// ConvAsProducts says how a GPU computes op (on inputs of types in) as
// matrix products, or reports false when it is not a convolution that
// gains by it: Conv2D and the weight gradient whose columns have at
// least convProductDepth rows (K), the input gradient and ConvTranspose2D
// whose groups have at least convProductDepth output channels (OG): the
// depths of their products.
func ConvAsProducts(op graph.Op, in []graph.Type) (ConvProducts, bool) {
	m, ok := op.(convOp)
	if !ok || len(in) != 2 || !graph.IsFloat(in[0].DType) {
		return ConvProducts{}, false
	}
	g, err := m.geomOf(in[0].Shape, in[1].Shape)
	if err != nil {
		return ConvProducts{}, false
	}
	c := ConvProducts{Kind: ConvForwardProducts, Images: g.n, Groups: g.groups, OG: g.og, K: g.k(),
		P: g.oh * g.ow, g: g}
	c.ColsImage = int64(c.Groups) * int64(c.K) * int64(c.P)
	c.X, c.Y = int64(g.c)*int64(g.h)*int64(g.w), int64(g.o)*int64(c.P)
	depth := c.K
	switch m.kind() {
	case convInputGrad:
		c.Kind, depth = ConvInputProducts, c.OG
	case convWeightGrad:
		c.Kind = ConvWeightProducts
	}
	if depth < convProductDepth || c.ColsImage == 0 {
		return ConvProducts{}, false
	}
	return c, true
}

// Weights is the number of elements of the weight, O·K.
func (c ConvProducts) Weights() int64 { return int64(c.Groups) * int64(c.OG) * int64(c.K) }

// convUnfoldC writes element i of the columns of images of x (in0) to
// out0: 0 where its tap lies in the padding.
const convUnfoldC = `const long long pos = i % $P, k = i / $P % $K, bg = i / ($P * $K);
const long long grp = bg % $GS, b = bg / $GS;
const long long q = k % $KW, p = k / $KW % $KH, c = k / ($KW * $KH);
const long long oy = pos / $OW, ox = pos % $OW;
const long long iy = oy * $SH - $PT + p * $DH, ix = ox * $SW - $PL + q * $DW;
out0[i] = (iy >= 0 && iy < $H && ix >= 0 && ix < $W) ? in0[((b * $C + grp * $CG + c) * $H + iy) * $W + ix] : (T)0;
`

// convFoldC computes image element x[b, ci, iy, ix] (out0) from the
// columns (in0): the sum over the taps (p, q) and output positions
// (oy, ox) that read it, in the order of convInputGradC.
const convFoldC = `const long long ix = i % $W, iy = i / $W % $H, ci = i / ($W * $H) % $C, b = i / ($W * $H * $C);
const long long grp = ci / $CG, c = ci % $CG;
const T *col = in0 + (b * $GS + grp) * $K * $P;
T acc = 0;
for (long long p = 0; p < $KH; p++) {
	const long long ty = iy + $PT - p * $DH;
	if (ty < 0 || ty % $SH != 0 || ty / $SH >= $OH) continue;
	const long long oy = ty / $SH;
	for (long long q = 0; q < $KW; q++) {
		const long long tx = ix + $PL - q * $DW;
		if (tx < 0 || tx % $SW != 0 || tx / $SW >= $OW) continue;
		acc += col[((c * $KH + p) * $KW + q) * $P + oy * $OW + tx / $SW];
	}
}
out0[i] = acc;
`

// ColKernel is the kernel rearranging images images (in0 to out0):
// unfolding them (in0 the images x, out0 their columns), or for
// ConvInputProducts folding their columns (in0) into them (out0).
func (c ConvProducts) ColKernel(images int) graph.CUDASource {
	if c.Kind != ConvInputProducts {
		return graph.CUDASource{N: int64(images) * c.ColsImage, Body: c.g.cSource(convUnfoldC)}
	}
	return graph.CUDASource{N: int64(images) * c.X, Body: c.g.cSource(convFoldC), Work: int64(c.g.kh) * int64(c.g.kw)}
}

// SumKernel is the kernel adding the weight gradient's shares of images
// images (in0, one weight's elements after another) into the weight
// gradient (out0), in double: over what out0 holds unless first.
func (c ConvProducts) SumKernel(images int, first bool) graph.CUDASource {
	start := "(double)out0[i]"
	if first {
		start = "0"
	}
	body := fmt.Sprintf("double acc = %s;\nfor (long long b = 0; b < %dLL; b++) acc += (double)in0[b * %dLL + i];\nout0[i] = (T)acc;\n",
		start, images, c.Weights())
	return graph.CUDASource{N: c.Weights(), Body: body, Work: int64(images)}
}
