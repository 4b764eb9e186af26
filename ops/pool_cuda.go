package ops

import (
	"fmt"
	"strings"

	"github.com/nabla-go/nabla/graph"
)

// poolHelpersC are the C helpers of the pooling kernels, the same for
// every one of them: the window arithmetic of spans and maxPlane, with
// the geometry passed as arguments (literals at the call sites).
var poolHelpersC = specialValuesC("nb_pool") + `
/* window i along an axis of length n (kernel k, stride s, padding p,
   dilation d): the number of its taps inside the image (0 if none) and,
   in *first, the first one's index, as spans finds them */
static DEVICE inline long long nb_pool_taps(long long i, long long n, long long k, long long s, long long p, long long d, long long *first) {
	const long long start = i * s - p;
	long long t0 = 0, t1 = k;
	if (start < 0) t0 = (-start + d - 1) / d;
	if (start + (k - 1) * d >= n) t1 = start < n ? (n - 1 - start) / d + 1 : 0;
	*first = start + t0 * d;
	return t1 > t0 ? t1 - t0 : 0;
}
/* window i's size along an axis within the padded image: its share of
   average pooling's divisor */
static DEVICE inline long long nb_pool_size(long long i, long long n, long long k, long long s, long long p) {
	const long long start = i * s - p;
	return (start + k < n + p ? start + k : n + p) - start;
}
/* the windows along an axis of out windows that may hold index e: from
   the one returned to *last; window i holds e when (e + p - i*s) % d == 0 */
static DEVICE inline long long nb_pool_windows(long long e, long long k, long long s, long long p, long long d, long long out, long long *last) {
	const long long lo = e + p - (k - 1) * d, hi = (e + p) / s;
	*last = hi < out - 1 ? hi : out - 1;
	return lo <= 0 ? 0 : (lo + s - 1) / s;
}
/* the argmax of window (i, j) of plane x (h×w), as maxPlane finds it:
   the first maximum in row-major order or the last NaN, the first tap
   when every tap is -Inf, -1 when no tap is inside the image */
static DEVICE inline long long nb_pool_argmax(const T *x, long long i, long long j, long long h, long long w,
		long long kh, long long kw, long long sh, long long sw, long long ph, long long pw, long long dh, long long dw) {
	long long r0, c0;
	const long long nr = nb_pool_taps(i, h, kh, sh, ph, dh, &r0), nc = nb_pool_taps(j, w, kw, sw, pw, dw, &c0);
	if (nr == 0 || nc == 0) return -1;
	long long at = r0 * w + c0;
	T best = -nb_pool_inf();
	for (long long p = 0; p < nr; p++) {
		const long long row = (r0 + p * dh) * w + c0;
		for (long long q = 0; q < nc; q++) {
			const T v = x[row + q * dw];
			if (v > best || v != v) {
				best = v;
				at = row + q * dw;
			}
		}
	}
	return at;
}`

// poolAxisC are a pooling's parameters along one axis as C literals:
// the image's length, the kernel, stride, padding and dilation, and the
// number of windows.
type poolAxisC struct{ n, k, s, p, d, out string }

// axesC are g's parameters along the rows and the columns.
func (g poolGeom) axesC() [2]poolAxisC {
	var a [2]poolAxisC
	lit := func(v int) string { return fmt.Sprintf("%dLL", v) }
	for i, n := range [2]int{g.h, g.w} {
		a[i] = poolAxisC{lit(n), lit(g.kernel[i]), lit(g.stride[i]), lit(g.pad[i]), lit(g.dilation[i]),
			lit([2]int{g.oh, g.ow}[i])}
	}
	return a
}

// argmaxC is the C call finding the argmax of window (i, j) in the plane
// of in0 at offset plane.
func (g poolGeom) argmaxC(plane, i, j string) string {
	r, c := g.axesC()[0], g.axesC()[1]
	return fmt.Sprintf("nb_pool_argmax(in0 + %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
		plane, i, j, r.n, c.n, r.k, c.k, r.s, c.s, r.p, c.p, r.d, c.d)
}

// windowsC is C running body for each window (a, b) holding element
// (eh, ew) of a plane, in row-major order, with o the window's index.
func (g poolGeom) windowsC(body string) string {
	r, c := g.axesC()[0], g.axesC()[1]
	var b strings.Builder
	fmt.Fprintf(&b, "long long al, bl;\n")
	fmt.Fprintf(&b, "const long long a0 = nb_pool_windows(eh, %s, %s, %s, %s, %s, &al);\n", r.k, r.s, r.p, r.d, r.out)
	fmt.Fprintf(&b, "const long long b0 = nb_pool_windows(ew, %s, %s, %s, %s, %s, &bl);\n", c.k, c.s, c.p, c.d, c.out)
	fmt.Fprintf(&b, "for (long long a = a0; a <= al; a++) {\nif ((eh + %s - a * %s) %% %s != 0) continue;\n", r.p, r.s, r.d)
	fmt.Fprintf(&b, "for (long long b = b0; b <= bl; b++) {\nif ((ew + %s - b * %s) %% %s != 0) continue;\n", c.p, c.s, c.d)
	fmt.Fprintf(&b, "const long long o = a * %s + b;\n%s\n}\n}\n", c.out, body)
	return b.String()
}

// CUDA is the pooling's GPU kernel (graph.CUDAKernel), one work item per
// output element computing in T as Forward does. MaxPool2D and
// MaxPool2DGather find their window's argmax as Forward does;
// MaxPool2DGrad and AvgPool2DSpread, whose output is the images', loop
// over the windows holding their element, in Forward's order, adding the
// gradient of those whose argmax it is (so no two items write one
// element); AvgPool2D adds its window's taps in row-major order.
func (op poolOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	if err := checkFloatCUDA(op.Name()+" input", in[0]); err != nil {
		return nil, err
	}
	g, err := op.geomOfTypes(in)
	if err != nil {
		return nil, err
	}
	hw, ohw := int64(g.h)*int64(g.w), int64(g.oh)*int64(g.ow)
	r, c := g.axesC()[0], g.axesC()[1]
	var body string
	if op.pooled() { // an item per window
		body = fmt.Sprintf("const long long pl = i / %[1]dLL, o = i %% %[1]dLL, a = o / %[2]s, b = o %% %[2]s;\n", ohw, c.out)
	} else { // an item per image element
		body = fmt.Sprintf("const long long pl = i / %[1]dLL, e = i %% %[1]dLL, eh = e / %[2]s, ew = e %% %[2]s;\n", hw, c.n)
	}
	plane := fmt.Sprintf("pl * %dLL", hw)
	// An item loops over a window's taps, or over the windows holding
	// its element (at most ⌈span/stride⌉ along an axis), finding the
	// argmax of each for MaxPool2DGrad.
	taps := int64(g.kernel[0]) * int64(g.kernel[1])
	windows := int64(1)
	for a := range 2 {
		windows *= ceilDiv(int64((g.kernel[a]-1)*g.dilation[a]+1), int64(g.stride[a]))
	}
	work := taps
	switch op.kind {
	case maxPoolKind:
		body += fmt.Sprintf("const long long at = %s;\nout0[i] = at < 0 ? -nb_pool_inf() : in0[%s + at];\n",
			g.argmaxC(plane, "a", "b"), plane)
	case maxPoolGatherKind:
		body += fmt.Sprintf("const long long at = %s;\nout0[i] = at < 0 ? (T)0 : in1[%s + at];\n",
			g.argmaxC(plane, "a", "b"), plane)
	case maxPoolGradKind:
		body += "T acc = 0;\n" + g.windowsC(fmt.Sprintf("if (%s == e) acc += in1[pl * %dLL + o];",
			g.argmaxC(plane, "a", "b"), ohw)) + "out0[i] = acc;\n"
		work = windows * taps
	case avgPoolKind:
		body += fmt.Sprintf(`long long r0, c0;
const long long nr = nb_pool_taps(a, %s, %s, %s, %s, 1, &r0), nc = nb_pool_taps(b, %s, %s, %s, %s, 1, &c0);
T s = 0;
for (long long p = 0; p < nr; p++) {
const long long row = %s + (r0 + p) * %s + c0;
for (long long q = 0; q < nc; q++) s += in0[row + q];
}
out0[i] = s / (T)(%s * %s);
`, r.n, r.k, r.s, r.p, c.n, c.k, c.s, c.p, plane, c.n, g.sizeC(0, "a"), g.sizeC(1, "b"))
	case avgPoolSpreadKind:
		body += "T acc = 0;\n" + g.windowsC(fmt.Sprintf("acc += in0[pl * %dLL + o] / (T)(%s * %s);",
			ohw, g.sizeC(0, "a"), g.sizeC(1, "b"))) + "out0[i] = acc;\n"
		work = windows
	default:
		return nil, fmt.Errorf("no kernel for %s", op.Name())
	}
	return []graph.CUDASource{{N: int64(out[0].Size()), Body: body, Helpers: poolHelpersC, Work: work}}, nil
}

// sizeC is the C call giving window i's size along axis (0: rows, 1:
// columns).
func (g poolGeom) sizeC(axis int, i string) string {
	a := g.axesC()[axis]
	return fmt.Sprintf("nb_pool_size(%s, %s, %s, %s, %s)", i, a.n, a.k, a.s, a.p)
}
