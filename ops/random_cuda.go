package ops

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nabla-go/nabla/graph"
)

// The random ops' GPU kernels compute the same counters and the same
// conversions as the CPU kernels, bit for bit: uniforms, integers, float32
// and float64 normals, categorical draws and permutations (arithmetic
// through the round-to-nearest intrinsics, which the compiler does not
// fuse into multiply-adds, and the CPU's fixed procedures for log, sine,
// cosine and exp: see normalPair32, normalPair64 and exp64).

// float32C writes a float32 constant as a C literal that parses back to it.
func float32C(c float32) string {
	s := strconv.FormatFloat(float64(c), 'g', -1, 32)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s + "f"
}

// randomHelpersC defines Philox-4x32-10 and the float32 Box–Muller pair
// (see normalPair32) in C.
var randomHelpersC = func() string {
	var logPoly strings.Builder
	fmt.Fprintf(&logPoly, "float y = %s;\n", float32C(logCoefficients32[0]))
	for _, c := range logCoefficients32[1:] {
		fmt.Fprintf(&logPoly, "\ty = nb_rng_fadd(nb_rng_fmul(y, m), %s);\n", float32C(c))
	}
	return `#ifdef NABLA_HOST
#include <string.h>
#define nb_rng_fmul(a, b) ((float)(a) * (float)(b))
#define nb_rng_fadd(a, b) ((float)(a) + (float)(b))
#define nb_rng_fsub(a, b) ((float)(a) - (float)(b))
#define nb_rng_u2f(x) ((float)(x))
static inline unsigned int nb_rng_bits(float x) { unsigned int u; memcpy(&u, &x, 4); return u; }
static inline float nb_rng_float(unsigned int u) { float x; memcpy(&x, &u, 4); return x; }
static inline unsigned long long nb_rng_mulhi(unsigned long long a, unsigned long long b) {
	return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
#else
#define nb_rng_fmul(a, b) __fmul_rn(a, b)
#define nb_rng_fadd(a, b) __fadd_rn(a, b)
#define nb_rng_fsub(a, b) __fsub_rn(a, b)
#define nb_rng_u2f(x) __uint2float_rn(x)
#define nb_rng_bits(x) __float_as_uint(x)
#define nb_rng_float(u) __uint_as_float(u)
#define nb_rng_mulhi(a, b) __umul64hi(a, b)
#endif
/* block b of the stream (seed, id) at step: Philox-4x32-10 of the counter
   (b, step low, step high, id) under the key (seed low, seed high) */
static DEVICE inline void nb_rng_block(unsigned int w[4], unsigned long long seed, unsigned int id, unsigned long long step, unsigned int b) {
	unsigned int c0 = b, c1 = (unsigned int)step, c2 = (unsigned int)(step >> 32), c3 = id;
	unsigned int k0 = (unsigned int)seed, k1 = (unsigned int)(seed >> 32);
	for (int r = 0; r < 10; r++) {
		if (r) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
		unsigned long long p0 = 0xD2511F53ull * c0, p1 = 0xCD9E8D57ull * c2;
		c0 = (unsigned int)(p1 >> 32) ^ c1 ^ k0;
		c1 = (unsigned int)p1;
		c2 = (unsigned int)(p0 >> 32) ^ c3 ^ k1;
		c3 = (unsigned int)p0;
	}
	w[0] = c0; w[1] = c1; w[2] = c2; w[3] = c3;
}
/* the step held by a scalar, or a fault when it is not a non-negative integer */
static DEVICE inline int nb_rng_step(double s, unsigned long long *step) {
	if (!(s >= 0 && s < 18446744073709551616.0 && s == trunc(s))) { *step = 0; return 0; }
	*step = (unsigned long long)s;
	return 1;
}
/* Cephes' logf for x in (0, 1] */
static DEVICE inline float nb_rng_log32(float x) {
	unsigned int b = nb_rng_bits(x);
	float e = (float)((int)(b >> 23) - 126);
	float m = nb_rng_float((b & 0x007fffffu) | 0x3f000000u);
	if (m < ` + float32C(0.70710678118654752) + `) { e = nb_rng_fsub(e, 1.0f); m = nb_rng_fsub(nb_rng_fadd(m, m), 1.0f); }
	else { m = nb_rng_fsub(m, 1.0f); }
	float z = nb_rng_fmul(m, m);
	` + logPoly.String() + `	y = nb_rng_fmul(nb_rng_fmul(y, m), z);
	y = nb_rng_fadd(y, nb_rng_fmul(` + float32C(-2.12194440e-4) + `, e));
	y = nb_rng_fsub(y, nb_rng_fmul(0.5f, z));
	return nb_rng_fadd(nb_rng_fadd(m, y), nb_rng_fmul(` + float32C(0.693359375) + `, e));
}
/* sin 2πv and cos 2πv for v in [0, 1] */
static DEVICE inline void nb_rng_sincos32(float v, float *sn, float *cs) {
	float t = nb_rng_fmul(4.0f, v);
	float q = (float)(int)nb_rng_fadd(t, 0.5f);
	float x = nb_rng_fmul(nb_rng_fsub(t, q), ` + float32C(1.5707963267948966) + `);
	float z = nb_rng_fmul(x, x);
	float s = nb_rng_fsub(nb_rng_fmul(nb_rng_fadd(nb_rng_fmul(` + float32C(-1.9515295891e-4) + `, z), ` + float32C(8.3321608736e-3) + `), z), ` + float32C(1.6666654611e-1) + `);
	s = nb_rng_fadd(x, nb_rng_fmul(nb_rng_fmul(x, z), s));
	float c = nb_rng_fadd(nb_rng_fmul(nb_rng_fsub(nb_rng_fmul(` + float32C(2.443315711809948e-5) + `, z), ` + float32C(1.388731625493765e-3) + `), z), ` + float32C(4.166664568298827e-2) + `);
	c = nb_rng_fadd(nb_rng_fsub(1.0f, nb_rng_fmul(0.5f, z)), nb_rng_fmul(nb_rng_fmul(z, z), c));
	switch ((int)q & 3) {
	case 0: *sn = s; *cs = c; break;
	case 1: *sn = c; *cs = -s; break;
	case 2: *sn = -s; *cs = -c; break;
	default: *sn = -c; *cs = s;
	}
}
/* the float32 Box–Muller pair of two words */
static DEVICE inline void nb_rng_normal32(unsigned int w0, unsigned int w1, float *a, float *b) {
	float u = nb_rng_fadd(nb_rng_fmul(nb_rng_u2f(w0), 2.3283064365386963e-10f), 1.1641532182693481e-10f);
	float v = nb_rng_fadd(nb_rng_fmul(nb_rng_u2f(w1), 2.3283064365386963e-10f), 1.1641532182693481e-10f);
	float r = sqrtf(-2.0f * nb_rng_log32(u)), s, c;
	nb_rng_sincos32(v, &s, &c);
	*a = nb_rng_fmul(r, c);
	*b = nb_rng_fmul(r, s);
}
/* the 64 bits of words j and j+1 */
static DEVICE inline unsigned long long nb_rng_u64(const unsigned int w[4], int j) {
	return ((unsigned long long)w[j] << 32) | w[j + 1];
}` + random64HelpersC
}()

// randomStepC reads the step and faults where Forward would refuse it.
const randomStepC = "unsigned long long step;\nif (!nb_rng_step((double)in0[0], &step)) FAULT();\nunsigned int w[4];\n"

// CUDA is the random op's GPU kernel: one work item per element, each
// computing its Philox block.
func (op randomOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	if err := checkFloatCUDA(op.Name()+" output", out[0]); err != nil {
		return nil, err
	}
	f32 := out[0].DType == graph.Float32
	shift := 1
	if f32 {
		shift = 2
	}
	body := randomStepC + fmt.Sprintf("nb_rng_block(w, %dULL, %dU, step, (unsigned int)(i >> %d));\n", op.s.Seed, op.s.ID, shift)
	switch {
	case f32 && op.kind == uniformKind:
		body += "out0[i] = (float)(w[i & 3] >> 8) * 5.9604644775390625e-08f;\n"
	case f32:
		body += "float a, b;\nnb_rng_normal32(w[i & 2], w[(i & 2) + 1], &a, &b);\nout0[i] = (i & 1) ? b : a;\n"
	case op.kind == uniformKind:
		body += "out0[i] = (double)(nb_rng_u64(w, (int)(i & 1) * 2) >> 11) * 1.1102230246251565e-16;\n"
	default:
		body += `const double u = ((double)(nb_rng_u64(w, 0) >> 11) + 0.5) * 1.1102230246251565e-16;
const double v = ((double)(nb_rng_u64(w, 2) >> 11) + 0.5) * 1.1102230246251565e-16;
double a, b;
nb_rng_normal64(u, v, &a, &b);
out0[i] = (i & 1) ? b : a;
`
	}
	return []graph.CUDASource{{N: int64(out[0].Size()), Body: body, Helpers: randomHelpersC}}, nil
}

// CUDA is RandomInt's GPU kernel: one work item per element.
func (op randomIntOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	body := randomStepC + fmt.Sprintf(`nb_rng_block(w, %dULL, %dU, step, (unsigned int)(i >> 1));
out0[i] = (%s)(%dLL + (long long)nb_rng_mulhi(nb_rng_u64(w, (int)(i & 1) * 2), %dULL));
`, op.s.Seed, op.s.ID, CType(out[0].DType), op.low, uint64(op.high-op.low))
	return []graph.CUDASource{{N: int64(out[0].Size()), Body: body, Helpers: randomHelpersC}}, nil
}
