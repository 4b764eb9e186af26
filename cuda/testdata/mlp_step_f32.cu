#ifdef NABLA_HOST
#include <math.h>
#define DEVICE
#define KERNEL
#define FIRST 0
#define STRIDE 1
#ifdef NABLA_REVERSE
#define ITEM(k, n) ((n) - 1 - (k))
#else
#define ITEM(k, n) (k)
#endif
#define ATOMIC_ADD(p, v) (*(p) += (v))
#else
#define DEVICE __device__
#define KERNEL extern "C" __global__
#define FIRST ((long long)blockIdx.x * blockDim.x + threadIdx.x)
#define STRIDE ((long long)gridDim.x * blockDim.x)
#define ITEM(k, n) (k)
#define ATOMIC_ADD(p, v) atomicAdd((p), (v))
#endif
typedef long long i64;
typedef int i32;
#define FAULT() (*fault_ = site_)
typedef float T;
static DEVICE inline T nb_max(T a, T b) {
	if (a != a) return a;
	if (b != b) return b;
	if (a == b) return signbit(a) ? b : a;
	return a > b ? a : b;
}
static DEVICE inline T nb_min(T a, T b) {
	if (a != a) return a;
	if (b != b) return b;
	if (a == b) return signbit(a) ? a : b;
	return a < b ? a : b;
}
static DEVICE inline T nb_sign(T x) { return x > (T)0 ? (T)1 : (x < (T)0 ? (T)-1 : x); }
static DEVICE inline T nb_relu(T x) { return x != x ? x : (x > (T)0 ? x : (T)0); }
static DEVICE inline T nb_sigmoid(T x) {
	if (x >= (T)0) return (T)1 / ((T)1 + expf(-x));
	T e = expf(x);
	return e / ((T)1 + e);
}
static DEVICE inline T nb_softplus(T x) { return nb_relu(x) + log1pf(expf(-fabsf(x))); }
static DEVICE inline T nb_gelu(T x) { return (T)0.5 * x * ((T)1 + erff(x * (T)0.7071067811865476)); }
static DEVICE inline T nb_gelu_tanh(T x) {
	return (T)0.5 * x * ((T)1 + tanhf((T)0.7978845608028654 * (x + (T)0.044715 * x * x * x)));
}
#ifdef NABLA_HOST
static DEVICE inline T nb_red_inf(void) { return (T)(1.0 / 0.0); }
static DEVICE inline T nb_red_nan(void) { return (T)(0.0 / 0.0); }
#else
static DEVICE inline T nb_red_inf(void) { return (T)__longlong_as_double(0x7ff0000000000000LL); }
static DEVICE inline T nb_red_nan(void) { return (T)__longlong_as_double(0x7ff8000000000000LL); }
#endif
/* the larger of m and v, or NaN if either is (once m is NaN it stays NaN) */
static DEVICE inline T nb_red_max(T m, T v) { return (v > m || v != v) ? v : m; }
static DEVICE inline double nb_red_maxd(double m, double v) { return (v > m || v != v) ? v : m; }
/* x is neither infinite nor NaN */
static DEVICE inline int nb_red_finite(T x) { return x - x == (T)0; }
/* a label as a class index in [0,n), or -1 when it is not one */
static DEVICE inline long long nb_red_class_i64(long long v, long long n) { return v >= 0 && v < n ? v : -1; }
static DEVICE inline long long nb_red_class_f(double v, long long n) {
	return v >= 0 && v < (double)n && v == trunc(v) ? (long long)v : -1;
}
KERNEL void k0(const float *__restrict__ in0, float *__restrict__ out0, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		out0[i] = in0[(i / 1 % 16) * 1];
	}
}
#ifdef NABLA_HOST
void k0_host(const unsigned long long *a) { k0((const float *)a[0], (float *)a[1], (long long *)a[2], (long long )a[3], (long long )a[4]); }
#endif
KERNEL void k1(const float *in0, float *out0, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		const T x0 = in0[i];
		const T s0 = tanhf(x0);
		out0[i] = s0;
	}
}
#ifdef NABLA_HOST
void k1_host(const unsigned long long *a) { k1((const float *)a[0], (float *)a[1], (long long *)a[2], (long long )a[3], (long long )a[4]); }
#endif
KERNEL void k2(const float *__restrict__ in0, float *__restrict__ out0, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		out0[i] = in0[(i / 1 % 8) * 1];
	}
}
#ifdef NABLA_HOST
void k2_host(const unsigned long long *a) { k2((const float *)a[0], (float *)a[1], (long long *)a[2], (long long )a[3], (long long )a[4]); }
#endif
KERNEL void k3(const float *__restrict__ in0, float *__restrict__ out0, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		out0[i] = in0[(i / 1 % 5) * 1];
	}
}
#ifdef NABLA_HOST
void k3_host(const unsigned long long *a) { k3((const float *)a[0], (float *)a[1], (long long *)a[2], (long long )a[3], (long long )a[4]); }
#endif
KERNEL void k4(const float *__restrict__ in0, float *__restrict__ out0, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		const long long base = i * 5LL;
		double m = -(double)nb_red_inf();
		for (long long k = 0; k < 5LL; k++) m = nb_red_maxd(m, (double)in0[base + k]);
		double s = 0;
		for (long long k = 0; k < 5LL; k++) {
		const double e = exp((double)in0[base + k] - m);
		out0[base + k] = (T)e;
		s += e;
		}
		for (long long k = 0; k < 5LL; k++) out0[base + k] /= (T)s;
	}
}
#ifdef NABLA_HOST
void k4_host(const unsigned long long *a) { k4((const float *)a[0], (float *)a[1], (long long *)a[2], (long long )a[3], (long long )a[4]); }
#endif
KERNEL void k5(const i64 *__restrict__ in0, float *__restrict__ out0, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		const long long c = nb_red_class_i64((long long)in0[i / 5LL], 5LL);
		if (c < 0) FAULT();
		out0[i] = c < 0 ? nb_red_nan() : (c == i % 5LL ? (T)1 : (T)0);
	}
}
#ifdef NABLA_HOST
void k5_host(const unsigned long long *a) { k5((const i64 *)a[0], (float *)a[1], (long long *)a[2], (long long )a[3], (long long )a[4]); }
#endif
KERNEL void k6(const float *in0, const float *in1, float *out0, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		const T x0 = in0[i];
		const T x1 = in1[i];
		const T s0 = (x0 - x1);
		const T s1 = (s0 * ((T)0.14285715f));
		out0[i] = s1;
	}
}
#ifdef NABLA_HOST
void k6_host(const unsigned long long *a) { k6((const float *)a[0], (const float *)a[1], (float *)a[2], (long long *)a[3], (long long )a[4], (long long )a[5]); }
#endif
KERNEL void k7(const float *in0, const float *in1, const float *in2, float *out0, float *out1, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		const T x0 = in0[i];
		const T x1 = in1[i];
		const T x2 = in2[i];
		const T s0 = (x0 + x1);
		const T s1 = powf(x2, s0);
		const T s2 = (x1 - s1);
		const T s3 = sqrtf(s2);
		out0[i] = s0;
		out1[i] = s3;
	}
}
#ifdef NABLA_HOST
void k7_host(const unsigned long long *a) { k7((const float *)a[0], (const float *)a[1], (const float *)a[2], (float *)a[3], (float *)a[4], (long long *)a[5], (long long )a[6], (long long )a[7]); }
#endif
KERNEL void k8(const float *__restrict__ in0, const float *__restrict__ in1, const float *__restrict__ in2, const float *__restrict__ in3, float *__restrict__ out0, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		const T x0 = in0[i];
		const T x1 = in1[i];
		const T x2 = in2[i];
		const T x3 = in3[i];
		const T s0 = powf(x0, x1);
		const T s1 = (x2 - s0);
		const T s2 = (x3 / s1);
		out0[i] = s2;
	}
}
#ifdef NABLA_HOST
void k8_host(const unsigned long long *a) { k8((const float *)a[0], (const float *)a[1], (const float *)a[2], (const float *)a[3], (float *)a[4], (long long *)a[5], (long long )a[6], (long long )a[7]); }
#endif
KERNEL void k9(const float *in0, const float *in1, const float *in2, const float *in3, const float *in4, const float *in5, const float *in6, float *out0, float *out1, float *out2, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		const T x0 = in0[i];
		const T x1 = in1[i];
		const T x2 = in2[0];
		const T x3 = in3[0];
		const T x4 = in4[i];
		const T x5 = in5[0];
		const T x6 = in6[i];
		const T s0 = (x0 * x0);
		const T s1 = (s0 * ((T)0.001f));
		const T s2 = (x1 * ((T)0.999f));
		const T s3 = (s2 + s1);
		const T s4 = sqrtf(s3);
		const T s5 = (s4 / x2);
		const T s6 = (s5 + x3);
		const T s7 = (x0 * ((T)0.1f));
		const T s8 = (x4 * ((T)0.9f));
		const T s9 = (s8 + s7);
		const T s10 = (s9 / s6);
		const T s11 = (x5 * s10);
		const T s12 = (x6 - s11);
		out0[i] = s3;
		out1[i] = s9;
		out2[i] = s12;
	}
}
#ifdef NABLA_HOST
void k9_host(const unsigned long long *a) { k9((const float *)a[0], (const float *)a[1], (const float *)a[2], (const float *)a[3], (const float *)a[4], (const float *)a[5], (const float *)a[6], (float *)a[7], (float *)a[8], (float *)a[9], (long long *)a[10], (long long )a[11], (long long )a[12]); }
#endif
KERNEL void k10(const float *__restrict__ in0, float *__restrict__ out0, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		const long long r = i;
		double acc = 0;
		for (long long t = 0; t < 7LL; t++) {
		acc += (double)in0[r + t * 5LL];
		}
		T s = (T)acc;
		out0[i] = s;
	}
}
#ifdef NABLA_HOST
void k10_host(const unsigned long long *a) { k10((const float *)a[0], (float *)a[1], (long long *)a[2], (long long )a[3], (long long )a[4]); }
#endif
KERNEL void k11(const float *in0, const float *in1, const float *in2, float *out0, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		const T x0 = in0[i];
		const T x1 = in1[i];
		const T x2 = in2[0];
		const T s0 = (x1 * x1);
		const T s1 = (x2 - s0);
		const T s2 = (x0 * s1);
		out0[i] = s2;
	}
}
#ifdef NABLA_HOST
void k11_host(const unsigned long long *a) { k11((const float *)a[0], (const float *)a[1], (const float *)a[2], (float *)a[3], (long long *)a[4], (long long )a[5], (long long )a[6]); }
#endif
KERNEL void k12(const float *__restrict__ in0, float *__restrict__ out0, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		const long long r = i;
		double acc = 0;
		for (long long t = 0; t < 7LL; t++) {
		acc += (double)in0[r + t * 8LL];
		}
		T s = (T)acc;
		out0[i] = s;
	}
}
#ifdef NABLA_HOST
void k12_host(const unsigned long long *a) { k12((const float *)a[0], (float *)a[1], (long long *)a[2], (long long )a[3], (long long )a[4]); }
#endif
KERNEL void k13(const float *__restrict__ in0, float *__restrict__ out0, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		const long long r = i;
		double acc = 0;
		for (long long t = 0; t < 7LL; t++) {
		acc += (double)in0[r + t * 16LL];
		}
		T s = (T)acc;
		out0[i] = s;
	}
}
#ifdef NABLA_HOST
void k13_host(const unsigned long long *a) { k13((const float *)a[0], (float *)a[1], (long long *)a[2], (long long )a[3], (long long )a[4]); }
#endif
KERNEL void k14(const float *__restrict__ in0, const i64 *__restrict__ in1, float *__restrict__ out0, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		const long long base = i * 5LL;
		double m = -(double)nb_red_inf();
		for (long long k = 0; k < 5LL; k++) m = nb_red_maxd(m, (double)in0[base + k]);
		double s = 0;
		for (long long k = 0; k < 5LL; k++) {
		const double e = exp((double)in0[base + k] - m);
		s += e;
		}
		const long long c = nb_red_class_i64((long long)in1[i], 5LL);
		if (c < 0) FAULT();
		out0[i] = c < 0 ? nb_red_nan() : (T)(m + log(s) - (double)in0[base + c]);
	}
}
#ifdef NABLA_HOST
void k14_host(const unsigned long long *a) { k14((const float *)a[0], (const i64 *)a[1], (float *)a[2], (long long *)a[3], (long long )a[4], (long long )a[5]); }
#endif
KERNEL void k15(const float *__restrict__ in0, float *__restrict__ out0, long long *fault_, long long site_, long long n) {
	for (long long k_ = FIRST; k_ < n; k_ += STRIDE) {
		const long long i = ITEM(k_, n);
		const long long r = i;
		double acc = 0;
		for (long long t = 0; t < 7LL; t++) {
		acc += (double)in0[0 + t];
		}
		T s = (T)acc;
		s *= (T)1 / (T)7LL;
		out0[i] = s;
	}
}
#ifdef NABLA_HOST
void k15_host(const unsigned long long *a) { k15((const float *)a[0], (float *)a[1], (long long *)a[2], (long long )a[3], (long long )a[4]); }
#endif
