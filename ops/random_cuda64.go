package ops

import (
	"fmt"
	"strconv"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// float64C writes a float64 constant as a C literal that parses back to it.
func float64C(c float64) string {
	s := strconv.FormatFloat(c, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eIN") {
		s += ".0"
	}
	return s
}

// polyC writes poly64's evaluation of p at z into the double y.
func polyC(p []float64, z string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "double y = nb_rng_dmul(%s, %s);\n", float64C(p[0]), z)
	for _, c := range p[1:5] {
		fmt.Fprintf(&b, "\ty = nb_rng_dmul(nb_rng_dadd(y, %s), %s);\n", float64C(c), z)
	}
	fmt.Fprintf(&b, "\ty = nb_rng_dadd(y, %s);\n", float64C(p[5]))
	return b.String()
}

// random64HelpersC defines, in C, the float64 procedures of the random
// ops (log64, sincos64, normalPair64, exp64), each operation rounded by
// itself (CUDA's _rn intrinsics, which the compiler does not fuse), so
// that the GPU's values are the CPU's bit for bit; randomHelpersC ends
// with them.
var random64HelpersC = `
#ifdef NABLA_HOST
#define nb_rng_dmul(a, b) ((double)(a) * (double)(b))
#define nb_rng_dadd(a, b) ((double)(a) + (double)(b))
#define nb_rng_dsub(a, b) ((double)(a) - (double)(b))
#define nb_rng_ddiv(a, b) ((double)(a) / (double)(b))
static inline unsigned long long nb_rng_dbits(double x) { unsigned long long u; memcpy(&u, &x, 8); return u; }
static inline double nb_rng_double(unsigned long long u) { double x; memcpy(&x, &u, 8); return x; }
#else
#define nb_rng_dmul(a, b) __dmul_rn(a, b)
#define nb_rng_dadd(a, b) __dadd_rn(a, b)
#define nb_rng_dsub(a, b) __dsub_rn(a, b)
#define nb_rng_ddiv(a, b) __ddiv_rn(a, b)
#define nb_rng_dbits(x) ((unsigned long long)__double_as_longlong(x))
#define nb_rng_double(u) __longlong_as_double((long long)(u))
#endif
/* log64: math.Log's amd64 procedure for a positive x */
static DEVICE inline double nb_rng_log64(double x) {
	unsigned long long b = nb_rng_dbits(x);
	long long off = 1022;
	if ((b >> 52) == 0) { b = nb_rng_dbits(nb_rng_dmul(x, 18014398509481984.0)); off = 1022 + 54; }
	double f1 = nb_rng_double((b & 0x000FFFFFFFFFFFFFull) | 0x3FE0000000000000ull);
	double k = (double)((long long)(b >> 52) - off);
	if (f1 <= ` + float64C(7.07106781186547524401e-01) + `) { k = nb_rng_dsub(k, 1.0); f1 = nb_rng_dmul(f1, 2.0); }
	double f = nb_rng_dsub(f1, 1.0);
	double s = nb_rng_ddiv(f, nb_rng_dadd(2.0, f));
	double s2 = nb_rng_dmul(s, s), s4 = nb_rng_dmul(s2, s2);
	double t1 = nb_rng_dmul(` + float64C(log64L7) + `, s4);
	t1 = nb_rng_dadd(nb_rng_dmul(nb_rng_dadd(t1, ` + float64C(log64L5) + `), s4), ` + float64C(log64L3) + `);
	t1 = nb_rng_dadd(nb_rng_dmul(t1, s4), ` + float64C(log64L1) + `);
	t1 = nb_rng_dmul(t1, s2);
	double t2 = nb_rng_dadd(nb_rng_dmul(` + float64C(log64L6) + `, s4), ` + float64C(log64L4) + `);
	t2 = nb_rng_dadd(nb_rng_dmul(t2, s4), ` + float64C(log64L2) + `);
	t2 = nb_rng_dmul(t2, s4);
	double hfsq = nb_rng_dmul(nb_rng_dmul(0.5, f), f);
	double inner = nb_rng_dadd(nb_rng_dmul(s, nb_rng_dadd(hfsq, nb_rng_dadd(t1, t2))), nb_rng_dmul(k, ` + float64C(log64Ln2Lo) + `));
	return nb_rng_dsub(nb_rng_dmul(k, ` + float64C(log64Ln2Hi) + `), nb_rng_dsub(nb_rng_dsub(hfsq, inner), f));
}
static DEVICE inline double nb_rng_cospoly(double z) {
	` + polyC(cos64C[:], "z") + `	return y;
}
static DEVICE inline double nb_rng_sinpoly(double z) {
	` + polyC(sin64C[:], "z") + `	return y;
}
/* sincos64: math.Sincos's procedure for x in (0, 2^9) */
static DEVICE inline void nb_rng_sincos64(double x, double *sn, double *cs) {
	unsigned long long j = (unsigned long long)nb_rng_dmul(x, ` + float64C(4/3.141592653589793) + `);
	double y = (double)j;
	if (j & 1) { j++; y = nb_rng_dadd(y, 1.0); }
	j &= 7;
	double z = nb_rng_dsub(nb_rng_dsub(nb_rng_dsub(x, nb_rng_dmul(y, 7.85398125648498535156e-1)), nb_rng_dmul(y, 3.77489470793079817668e-8)), nb_rng_dmul(y, 2.69515142907905952645e-15));
	double zz = nb_rng_dmul(z, z);
	double c = nb_rng_dadd(nb_rng_dsub(1.0, nb_rng_dmul(0.5, zz)), nb_rng_dmul(nb_rng_dmul(zz, zz), nb_rng_cospoly(zz)));
	double s = nb_rng_dadd(z, nb_rng_dmul(nb_rng_dmul(z, zz), nb_rng_sinpoly(zz)));
	if (j & 2) { double t = s; s = c; c = -t; }
	if (j & 4) { s = -s; c = -c; }
	*sn = s; *cs = c;
}
/* normalPair64 of u in (0, 1) and v */
static DEVICE inline void nb_rng_normal64(double u, double v, double *a, double *b) {
	double r = sqrt(nb_rng_dmul(-2.0, nb_rng_log64(u))), s, c;
	nb_rng_sincos64(nb_rng_dmul(` + float64C(2*3.141592653589793) + `, v), &s, &c);
	*a = nb_rng_dmul(r, c);
	*b = nb_rng_dmul(r, s);
}
/* exp64: math.Exp's Go procedure */
static DEVICE inline double nb_rng_exp64(double x) {
	if (x != x || x > 7.09782712893383973096e+02) return x * (1.0 / 0.0);
	if (x < -7.45133219101941108420e+02) return 0.0;
	if (-3.725290298461914e-09 < x && x < 3.725290298461914e-09) return nb_rng_dadd(1.0, x);
	long long k = x < 0 ? (long long)nb_rng_dsub(nb_rng_dmul(1.44269504088896338700e+00, x), 0.5) : (long long)nb_rng_dadd(nb_rng_dmul(1.44269504088896338700e+00, x), 0.5);
	double hi = nb_rng_dsub(x, nb_rng_dmul((double)k, 6.93147180369123816490e-01));
	double lo = nb_rng_dmul((double)k, 1.90821492927058770002e-10);
	double r = nb_rng_dsub(hi, lo), t = nb_rng_dmul(r, r);
	double c = nb_rng_dadd(nb_rng_dmul(t, 4.13813679705723846039e-08), -1.65339022054652515390e-06);
	c = nb_rng_dadd(nb_rng_dmul(t, c), 6.61375632143793436117e-05);
	c = nb_rng_dadd(nb_rng_dmul(t, c), -2.77777777770155933842e-03);
	c = nb_rng_dadd(nb_rng_dmul(t, c), 1.66666666666666657415e-01);
	c = nb_rng_dsub(r, nb_rng_dmul(t, c));
	double y = nb_rng_dsub(1.0, nb_rng_dsub(nb_rng_dsub(lo, nb_rng_ddiv(nb_rng_dmul(r, c), nb_rng_dsub(2.0, c))), hi));
	unsigned long long b = nb_rng_dbits(y);
	long long e = k + (long long)((b >> 52) & 0x7ff) - 1023;
	if (e < -1075) return 0.0;
	if (e > 1023) return 1.0 / 0.0;
	double m = 1.0;
	if (e < -1022) { e += 53; m = 1.1102230246251565e-16; }
	return nb_rng_dmul(m, nb_rng_double((b & ~(0x7ffull << 52)) | ((unsigned long long)(e + 1023) << 52)));
}
`

// CUDA is RandomCategorical's GPU kernel: one work item per row, summing
// the row's weights in the CPU's order by the same exponential; a row of
// NaN weights (no distribution) draws the NaN Go writes.
func (op randomCategoricalOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	k := in[1].Shape[len(in[1].Shape)-1]
	nan := goNaNC(out[0].DType)
	body := randomStepC + fmt.Sprintf(`nb_rng_block(w, %dULL, %dU, step, (unsigned int)(i >> 1));
const double u = (double)(nb_rng_u64(w, (int)(i & 1) * 2) >> 11) * 1.1102230246251565e-16;
const long long k = %dLL;
const T *row = in1 + i * k;
double top = (double)row[0];
for (long long j = 0; j < k; j++) {
	const double l = (double)row[j];
	top = (top != top || l != l) ? (top + l) : (l > top ? l : top);
}
double total = 0.0;
for (long long j = 0; j < k; j++) total = nb_rng_dadd(total, nb_rng_exp64(nb_rng_dsub((double)row[j], top)));
const double target = nb_rng_dmul(u, total);
long long c = 0;
for (double acc = nb_rng_exp64(nb_rng_dsub((double)row[0], top)); c < k - 1 && acc <= target;) {
	c++;
	acc = nb_rng_dadd(acc, nb_rng_exp64(nb_rng_dsub((double)row[c], top)));
}
out0[i] = total != total ? %s : (T)c;
`, op.s.Seed, op.s.ID, k, nan)
	return []graph.CUDASource{{N: int64(out[0].Size()), Body: body, Helpers: randomHelpersC}}, nil
}

// goNaNC is a C expression of the NaN Go writes in dtype: math.NaN(),
// and its conversion to float32.
func goNaNC(dtype tensor.Dtype) string {
	if dtype == graph.Float32 {
		return "nb_rng_float(0x7fc00000u)"
	}
	return "nb_rng_double(0x7FF8000000000001ull)"
}

// maxPermutationCUDA is the longest permutation the GPU kernel draws: each
// of its n work items ranks its key among all n, recomputing them, n²/2
// Philox blocks in all; longer ones run on the host, sorting.
const maxPermutationCUDA = 1 << 16

// CUDA is RandomPermutation's GPU kernel, for n up to maxPermutationCUDA:
// work item i counts the keys below its own (ties broken by the index, as
// Forward's sort does) and writes i at that rank. It has no scratch memory
// to sort in, so it recomputes the keys.
func (op randomPermutationOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	if op.n > maxPermutationCUDA {
		return nil, fmt.Errorf("RandomPermutation of %d: the GPU kernel ranks up to %d (n² work); longer ones sort on the host", op.n, maxPermutationCUDA)
	}
	body := randomStepC + fmt.Sprintf(`nb_rng_block(w, %[1]dULL, %[2]dU, step, (unsigned int)(i >> 1));
const unsigned long long key = nb_rng_u64(w, (int)(i & 1) * 2);
long long rank = 0;
for (long long b = 0; 2 * b < n; b++) {
	unsigned int v[4];
	nb_rng_block(v, %[1]dULL, %[2]dU, step, (unsigned int)b);
	for (int h = 0; h < 2 && 2 * b + h < n; h++) {
		const unsigned long long kj = nb_rng_u64(v, 2 * h);
		const long long j = 2 * b + h;
		rank += kj < key || (kj == key && j < i);
	}
}
out0[rank] = (%[3]s)i;
`, op.s.Seed, op.s.ID, CType(out[0].DType))
	return []graph.CUDASource{{N: int64(op.n), Body: body, Helpers: randomHelpersC}}, nil
}

// CUDA is RandomGamma's GPU kernel: one work item per element, drawing
// from the element's blocks by gammaDraw's operations.
func (op randomGammaOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	if err := checkFloatCUDA(op.Name()+" output", out[0]); err != nil {
		return nil, err
	}
	floor, nan := "2.2250738585072014e-308", goNaNC(out[0].DType)
	if out[0].DType == graph.Float32 {
		floor = "1.17549435e-38f"
	}
	body := randomStepC + fmt.Sprintf(`const double a0 = (double)in1[i];
double r;
if (!(a0 > 0) || a0 > 1.7976931348623157e308) {
	r = 0.0 / 0.0;
} else {
	const unsigned int base = (unsigned int)i * %[3]dU;
	double a = a0, boost = 1.0;
	if (a < 1) {
		nb_rng_block(w, %[1]dULL, %[2]dU, step, base);
		const double u = ((double)(nb_rng_u64(w, 0) >> 11) + 0.5) * 1.1102230246251565e-16;
		boost = nb_rng_exp64(nb_rng_ddiv(nb_rng_log64(u), a));
		a = nb_rng_dadd(a, 1.0);
	}
	const double d = nb_rng_dsub(a, %[4]s), c = nb_rng_ddiv(1.0, sqrt(nb_rng_dmul(9.0, d)));
	r = nb_rng_dmul(d, boost);
	for (unsigned int k = 0; k < %[5]dU; k++) {
		nb_rng_block(w, %[1]dULL, %[2]dU, step, base + 1 + 2 * k);
		double x, unused;
		nb_rng_normal64(((double)(nb_rng_u64(w, 0) >> 11) + 0.5) * 1.1102230246251565e-16,
			((double)(nb_rng_u64(w, 2) >> 11) + 0.5) * 1.1102230246251565e-16, &x, &unused);
		double v = nb_rng_dadd(1.0, nb_rng_dmul(c, x));
		if (v <= 0) continue;
		v = nb_rng_dmul(nb_rng_dmul(v, v), v);
		nb_rng_block(w, %[1]dULL, %[2]dU, step, base + 2 + 2 * k);
		const double u = ((double)(nb_rng_u64(w, 0) >> 11) + 0.5) * 1.1102230246251565e-16;
		const double x2 = nb_rng_dmul(x, x);
		if (u < nb_rng_dsub(1.0, nb_rng_dmul(nb_rng_dmul(0.0331, x2), x2)) ||
			nb_rng_log64(u) < nb_rng_dadd(nb_rng_dmul(0.5, x2), nb_rng_dmul(d, nb_rng_dadd(nb_rng_dsub(1.0, v), nb_rng_log64(v))))) {
			r = nb_rng_dmul(nb_rng_dmul(d, v), boost);
			break;
		}
	}
}
const T t = (T)r;
if (t != t) out0[i] = %[7]s;
else out0[i] = t > %[6]s ? t : %[6]s;
`, op.s.Seed, op.s.ID, gammaBlocks, float64C(1.0/3), gammaAttempts, floor, nan)
	return []graph.CUDASource{{N: int64(out[0].Size()), Body: body, Helpers: randomHelpersC}}, nil
}
