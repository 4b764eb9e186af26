package ops

import (
	"strconv"
	"strings"

	"github.com/nabla-go/nabla/graph"
)

// The GPU kernels of the convolutions: direct loops, one work item per
// output element summing (in T, as the CPU's products do) over the
// elements it depends on, but for the weight gradient, a split sum in
// double (see splitSum). The sizes are literals ($N and so on in the
// templates below: geom's fields). Stride, padding (same included),
// dilation, groups and a transposed convolution's output padding are all
// covered.

// convForwardC computes y[b, oc, oy, ox] (x is in0, w in1): the sum over
// the channels of oc's group and the kernel's taps inside the input.
const convForwardC = `const long long ox = i % $OW, oy = i / $OW % $OH, oc = i / ($OW * $OH) % $O, b = i / ($OW * $OH * $O);
const long long grp = oc / $OG;
T acc = 0;
for (long long c = 0; c < $CG; c++) {
	const T *xc = in0 + (b * $C + grp * $CG + c) * $H * $W;
	const T *wc = in1 + (oc * $CG + c) * $KH * $KW;
	for (long long p = 0; p < $KH; p++) {
		const long long iy = oy * $SH - $PT + p * $DH;
		if (iy < 0 || iy >= $H) continue;
		for (long long q = 0; q < $KW; q++) {
			const long long ix = ox * $SW - $PL + q * $DW;
			if (ix < 0 || ix >= $W) continue;
			acc += xc[iy * $W + ix] * wc[p * $KW + q];
		}
	}
}
out0[i] = acc;
`

// convInputGradC computes x[b, ci, iy, ix] (gy is in0, w in1): the sum
// over the taps (p, q) and the output positions (oy, ox) that read it,
// and over the output channels of ci's group.
const convInputGradC = `const long long ix = i % $W, iy = i / $W % $H, ci = i / ($W * $H) % $C, b = i / ($W * $H * $C);
const long long grp = ci / $CG, c = ci % $CG;
T acc = 0;
for (long long p = 0; p < $KH; p++) {
	const long long ty = iy + $PT - p * $DH;
	if (ty < 0 || ty % $SH != 0 || ty / $SH >= $OH) continue;
	const long long oy = ty / $SH;
	for (long long q = 0; q < $KW; q++) {
		const long long tx = ix + $PL - q * $DW;
		if (tx < 0 || tx % $SW != 0 || tx / $SW >= $OW) continue;
		const long long ox = tx / $SW;
		for (long long oc = grp * $OG; oc < (grp + 1) * $OG; oc++) {
			acc += in0[((b * $O + oc) * $OH + oy) * $OW + ox] * in1[((oc * $CG + c) * $KH + p) * $KW + q];
		}
	}
}
out0[i] = acc;
`

// convWeightGradSetupC and convWeightGradTermC compute w[oc, c, p, q]
// (x is in0, gy in1) as a splitSum over the images and output positions
// (b, oy, ox) flattened to t: the setup finds output r's place, the term
// adds a product when the tap (p, q) of (oy, ox) lies inside the input.
const convWeightGradSetupC = `const long long q = r % $KW, p = r / $KW % $KH, c = r / ($KW * $KH) % $CG, oc = r / ($KW * $KH * $CG);
const long long grp = oc / $OG;
const T *xc = in0 + (grp * $CG + c) * $H * $W;
const T *gc = in1 + oc * $OH * $OW;
`

const convWeightGradTermC = `const long long ox = t % $OW, oy = t / $OW % $OH, b = t / ($OW * $OH);
const long long iy = oy * $SH - $PT + p * $DH;
if (iy < 0 || iy >= $H) continue;
const long long ix = ox * $SW - $PL + q * $DW;
if (ix < 0 || ix >= $W) continue;
acc += (double)(xc[b * $C * $H * $W + iy * $W + ix] * gc[b * $O * $OH * $OW + oy * $OW + ox]);`

// cSource is the template with g's sizes in place of its $ names.
func (g geom) cSource(template string) string {
	lit := func(v int) string { return strconv.Itoa(v) + "LL" }
	// Longer names first (the replacer tries them in order), so that $OH
	// is not read as $O followed by H.
	return strings.NewReplacer(
		"$OW", lit(g.ow), "$OH", lit(g.oh), "$OG", lit(g.og), "$CG", lit(g.cg), "$GS", lit(g.groups),
		"$KH", lit(g.kh), "$KW", lit(g.kw), "$SH", lit(g.stride[0]), "$SW", lit(g.stride[1]),
		"$DH", lit(g.dilation[0]), "$DW", lit(g.dilation[1]), "$PT", lit(g.pad[0]), "$PL", lit(g.pad[2]),
		"$N", lit(g.n), "$C", lit(g.c), "$H", lit(g.h), "$W", lit(g.w), "$O", lit(g.o),
		"$P", lit(g.oh*g.ow), "$K", lit(g.k()),
	).Replace(template)
}

// convOp is a member of the convolution family as an op.
type convOp interface {
	graph.Op
	convMember
}

// convCUDA is the GPU kernel of a convolution op m: one item per element
// of its output for the forward convolution and the input gradient; the
// weight gradient, a long sum for each of few outputs, is a splitSum
// (adding in double).
func convCUDA(m convOp, in, out []graph.Type) ([]graph.CUDASource, error) {
	t, err := checkKernelTypes(m, in, out)
	if err != nil {
		return nil, err
	}
	g, err := m.geomOf(in[0].Shape, in[1].Shape)
	if err != nil {
		return nil, err
	}
	switch m.kind() {
	case convInputGrad:
		work := int64(g.kh) * int64(g.kw) * int64(g.og)
		return []graph.CUDASource{{N: int64(t.Size()), Body: g.cSource(convInputGradC), Work: work}}, nil
	case convWeightGrad:
		split := newSplitSum(int64(t.Size()), int64(g.n)*int64(g.oh)*int64(g.ow))
		return split.kernels(g.cSource(convWeightGradSetupC), g.cSource(convWeightGradTermC), "out0[i] = (T)acc;\n", 0, ""), nil
	}
	work := int64(g.cg) * int64(g.kh) * int64(g.kw)
	return []graph.CUDASource{{N: int64(t.Size()), Body: g.cSource(convForwardC), Work: work}}, nil
}

// CUDA is Conv2D's GPU kernel.
func (op conv2DOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	return convCUDA(op, in, out)
}

// CUDA is the GPU kernel of Conv2D's input gradient and ConvTranspose2D.
func (op convInputOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	return convCUDA(op, in, out)
}

// CUDA is Conv2D's weight-gradient GPU kernel.
func (op convWeightOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	return convCUDA(op, in, out)
}
