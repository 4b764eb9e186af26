/* A stand-in for the CUDA driver, NVRTC and cuBLAS, for testing the GPU
 * backend's control flow on machines without a GPU. It declares the
 * functions the backend binds with the headers' prototypes. Device memory
 * is host memory; work queued on a stream is kept until the stream is
 * synchronized (so that a host buffer overwritten before its queued copy
 * ran shows); a capture records the queued work into a graph instead. A
 * kernel named "k" computes b[i] = 2*a[i] + 1 from its parameters (a, b,
 * n); gemms compute column-major products. Every call but the device
 * queries fails with CUDA_ERROR_INVALID_CONTEXT (201) unless the context
 * is current on the calling thread. */
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

typedef unsigned long long u64;
enum { OP_COPY = 1, OP_KERNEL, OP_DGEMM, OP_SGEMM, OP_LIB };
typedef struct {
	int kind;
	u64 dst, src, n;          /* OP_COPY */
	long long arg[3];         /* OP_KERNEL */
	long long g[15];          /* gemms: ta tb m n k A lda B ldb C ldc sa sb sc batch */
	double alpha, beta;
} op_t;
typedef struct { int n, cap; op_t *ops; } list_t;

static int ctx_token = 0x5ca1ab1e;
static __thread void *current;
static list_t queue, capture;
static int capturing, invalidated;
static long long launches, syncs, queries;
static int hang;

static int bad_ctx(void) { return current != (void *)&ctx_token; }
#define CHECK_CTX do { if (bad_ctx()) return 201; } while (0)
#define NO_CAPTURE do { if (capturing) { invalidated = 1; return 900; } } while (0)

static void push(list_t *l, op_t o) {
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->ops = realloc(l->ops, l->cap * sizeof(op_t));
	}
	l->ops[l->n++] = o;
}
static void enqueue(op_t o) {
	if (o.kind == OP_LIB && !capturing) o.arg[2] = hang; /* a replay's too */
	push(capturing ? &capture : &queue, o);
}

static double at(int f32, u64 base, long long i) { return f32 ? ((float *)base)[i] : ((double *)base)[i]; }
static void gemm(op_t *o) {
	long long *g = o->g; int f32 = o->kind == OP_SGEMM;
	for (long long p = 0; p < g[14]; p++)
		for (long long i = 0; i < g[2]; i++)
			for (long long j = 0; j < g[3]; j++) {
				double s = 0;
				for (long long l = 0; l < g[4]; l++) {
					long long ai = g[0] ? l + i * g[6] : i + l * g[6];
					long long bi = g[1] ? j + l * g[8] : l + j * g[8];
					s += at(f32, g[5], p * g[11] + ai) * at(f32, g[7], p * g[12] + bi);
				}
				long long ci = p * g[13] + i + j * g[10];
				s *= o->alpha;
				if (o->beta != 0) s += o->beta * at(f32, g[9], ci);
				if (f32) ((float *)g[9])[ci] = (float)s; else ((double *)g[9])[ci] = s;
			}
}
static void run(op_t *o) {
	switch (o->kind) {
	case OP_COPY: memmove((void *)o->dst, (void *)o->src, o->n); break;
	case OP_LIB: {
		double *in = (double *)o->src, *out = (double *)o->dst;
		for (u64 i = 0; i < o->n; i++) out[i] = 2 * in[i];
		break;
	}
	case OP_KERNEL: {
		double *a = (double *)o->arg[0], *b = (double *)o->arg[1];
		for (long long i = 0; i < o->arg[2]; i++) b[i] = 2 * a[i] + 1;
		break;
	}
	default: gemm(o);
	}
}

/* Driver. */
int cuInit(unsigned flags) { return 0; }
int cuDeviceGetCount(int *n) { *n = 1; return 0; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuGetErrorName(int r, const char **s) {
	switch (r) {
	case 201: *s = "CUDA_ERROR_INVALID_CONTEXT"; return 0;
	case 900: *s = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"; return 0;
	case 901: *s = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"; return 0;
	}
	return 1;
}
int cuDeviceGet(int *dev, int ordinal) { if (ordinal != 0) return 101; *dev = 0; return 0; }
int cuDeviceGetAttribute(int *v, int attr, int dev) {
	switch (attr) {
	case 16: *v = 4; return 0;
	case 75: *v = 9; return 0;
	case 76: *v = 0; return 0;
	}
	return 1;
}
int cuDeviceGetName(char *name, int len, int dev) { strncpy(name, "Fake GPU", len); return 0; }
int cuDevicePrimaryCtxRetain(void **ctx, int dev) { *ctx = &ctx_token; return 0; }
int cuDevicePrimaryCtxRelease_v2(int dev) { return 0; }
int cuCtxSetCurrent(void *ctx) { current = ctx; return 0; }
int cuStreamCreate(void **s, unsigned flags) { CHECK_CTX; *s = (void *)0x57; return flags == 1 ? 0 : 1; }
int cuStreamDestroy_v2(void *s) { CHECK_CTX; return 0; }
/* hung says whether the queue holds library work that never ends. */
static int hung(void) {
	for (int i = 0; i < queue.n; i++)
		if (queue.ops[i].kind == OP_LIB && queue.ops[i].arg[2]) return 1;
	return 0;
}
static void drain(void) {
	for (int i = 0; i < queue.n; i++) run(&queue.ops[i]);
	queue.n = 0;
}
/* A wait for hung work would never return: it fails (999) instead. */
int cuStreamSynchronize(void *s) {
	CHECK_CTX; NO_CAPTURE;
	if (hung()) return 999;
	drain(); syncs++;
	return 0;
}
int cuStreamQuery(void *s) {
	CHECK_CTX; NO_CAPTURE;
	queries++;
	if (hung()) return 600; /* CUDA_ERROR_NOT_READY */
	drain();
	return 0;
}
int cuMemAlloc_v2(u64 *p, size_t n) { CHECK_CTX; NO_CAPTURE; if (n == 0) return 1; *p = (u64)aligned_alloc(256, (n + 255) / 256 * 256); return 0; }
int cuMemFree_v2(u64 p) { CHECK_CTX; NO_CAPTURE; free((void *)p); return 0; }
int cuMemAllocHost_v2(void **p, size_t n) { CHECK_CTX; NO_CAPTURE; *p = malloc(n); return 0; }
int cuMemFreeHost(void *p) { CHECK_CTX; NO_CAPTURE; free(p); return 0; }
static int copy(u64 dst, u64 src, size_t n) { op_t o = {OP_COPY, dst, src, n}; enqueue(o); return 0; }
int cuMemcpyHtoDAsync_v2(u64 dst, const void *src, size_t n, void *s) { CHECK_CTX; return copy(dst, (u64)src, n); }
int cuMemcpyDtoHAsync_v2(void *dst, u64 src, size_t n, void *s) { CHECK_CTX; return copy((u64)dst, src, n); }
int cuMemcpyDtoDAsync_v2(u64 dst, u64 src, size_t n, void *s) { CHECK_CTX; return copy(dst, src, n); }
int cuModuleLoadData(void **m, const void *image) { CHECK_CTX; *m = strdup(image); return 0; }
int cuModuleUnload(void *m) { CHECK_CTX; free(m); return 0; }
int cuModuleGetFunction(void **f, void *m, const char *name) {
	CHECK_CTX;
	if (strcmp(name, "k") != 0) return 500;
	*f = (void *)0xF00D; return 0;
}
int cuFuncGetParamInfo(void *f, size_t i, size_t *off, size_t *size) {
	if (i >= 3) return 1;
	*off = 8 * i; *size = 8; return 0;
}
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
	unsigned shared, void *stream, void **params, void **extra) {
	CHECK_CTX;
	if (f != (void *)0xF00D || gx == 0 || gy != 1 || gz != 1 || bx != 256 || by != 1 || bz != 1 || shared || extra) return 1;
	op_t o = {OP_KERNEL};
	for (int i = 0; i < 3; i++) o.arg[i] = *(long long *)params[i];
	enqueue(o); launches++;
	return 0;
}
int cuStreamBeginCapture_v2(void *s, int mode) { CHECK_CTX; if (capturing || mode != 2) return 1; capturing = 1; invalidated = 0; capture.n = 0; return 0; }
int cuStreamEndCapture(void *s, void **graph) {
	CHECK_CTX;
	if (!capturing) return 1;
	capturing = 0;
	if (invalidated) { *graph = NULL; return 901; }
	list_t *g = calloc(1, sizeof(list_t));
	for (int i = 0; i < capture.n; i++) push(g, capture.ops[i]);
	*graph = g; return 0;
}
int cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags) {
	CHECK_CTX;
	list_t *g = graph, *e = calloc(1, sizeof(list_t));
	for (int i = 0; i < g->n; i++) push(e, g->ops[i]);
	*exec = e; return 0;
}
int cuGraphLaunch(void *exec, void *s) {
	CHECK_CTX;
	list_t *e = exec;
	for (int i = 0; i < e->n; i++) enqueue(e->ops[i]);
	return 0;
}
static void destroy(list_t *l) { free(l->ops); free(l); }
int cuGraphDestroy(void *g) { CHECK_CTX; destroy(g); return 0; }
int cuGraphExecDestroy(void *e) { CHECK_CTX; destroy(e); return 0; }

/* NVRTC: the "CUBIN" is the source; a source naming undefined_name does
 * not compile. */
typedef struct { char *src; } prog_t;
int nvrtcVersion(int *major, int *minor) { *major = 13; *minor = 0; return 0; }
const char *nvrtcGetErrorString(int r) { return r == 6 ? "NVRTC_ERROR_COMPILATION" : "NVRTC_ERROR_OTHER"; }
int nvrtcCreateProgram(void **p, const char *src, const char *name, int nh, const char *const *h, const char *const *in) {
	prog_t *q = malloc(sizeof *q); q->src = strdup(src); *p = q; return 0;
}
int nvrtcDestroyProgram(void **p) { prog_t *q = *p; free(q->src); free(q); *p = NULL; return 0; }
int nvrtcCompileProgram(void *p, int n, const char *const *opts) {
	if (n != 3 || strcmp(opts[0], "--gpu-architecture=sm_90") || strcmp(opts[1], "--std=c++17") || strcmp(opts[2], "-DNDEBUG")) return 5;
	return strstr(((prog_t *)p)->src, "undefined_name") ? 6 : 0;
}
static const char *log_text = "nabla.cu(1): error: identifier \"undefined_name\" is undefined";
int nvrtcGetProgramLogSize(void *p, size_t *n) { *n = strlen(log_text) + 1; return 0; }
int nvrtcGetProgramLog(void *p, char *log) { strcpy(log, log_text); return 0; }
int nvrtcGetCUBINSize(void *p, size_t *n) { *n = strlen(((prog_t *)p)->src) + 1; return 0; }
int nvrtcGetCUBIN(void *p, char *out) { strcpy(out, ((prog_t *)p)->src); return 0; }
int nvrtcGetPTXSize(void *p, size_t *n) { return 1; }
int nvrtcGetPTX(void *p, char *out) { return 1; }

/* cuBLAS. */
static int workspace_set, pointer_mode = -1;
int cublasCreate_v2(void **h) { if (bad_ctx()) return 1; *h = (void *)0xB1A5; return 0; }
int cublasDestroy_v2(void *h) { return 0; }
int cublasSetStream_v2(void *h, void *s) { return s == (void *)0x57 ? 0 : 7; }
int cublasSetWorkspace_v2(void *h, void *w, size_t n) { workspace_set = w && n >= (32 << 20); return workspace_set ? 0 : 7; }
int cublasSetPointerMode_v2(void *h, int m) { pointer_mode = m; return 0; }
static int enqueue_gemm(int kind, long long *g, double alpha, double beta) {
	if (bad_ctx()) return 1;
	if (!workspace_set || pointer_mode != 0) return 14;
	op_t o = {kind};
	memcpy(o.g, g, sizeof o.g);
	o.alpha = alpha; o.beta = beta;
	enqueue(o); return 0;
}
#define GEMM(name, T, kind) \
int name(void *h, int ta, int tb, int m, int n, int k, const T *alpha, const T *A, int lda, const T *B, int ldb, \
	const T *beta, T *C, int ldc) { \
	long long g[15] = {ta, tb, m, n, k, (long long)A, lda, (long long)B, ldb, (long long)C, ldc, 0, 0, 0, 1}; \
	return enqueue_gemm(kind, g, *alpha, *beta); }
#define GEMM_BATCHED(name, T, kind) \
int name(void *h, int ta, int tb, int m, int n, int k, const T *alpha, const T *A, int lda, long long sa, \
	const T *B, int ldb, long long sb, const T *beta, T *C, int ldc, long long sc, int batch) { \
	long long g[15] = {ta, tb, m, n, k, (long long)A, lda, (long long)B, ldb, (long long)C, ldc, sa, sb, sc, batch}; \
	return enqueue_gemm(kind, g, *alpha, *beta); }
GEMM(cublasDgemm_v2, double, OP_DGEMM)
GEMM(cublasSgemm_v2, float, OP_SGEMM)
GEMM_BATCHED(cublasDgemmStridedBatched, double, OP_DGEMM)
GEMM_BATCHED(cublasSgemmStridedBatched, float, OP_SGEMM)

/* A library's call (the tests' op): out = 2·in on n doubles, queued on
 * the stream; while fake_hang(1) holds, the calls queued never end (their
 * library waits for a peer), until fake_abort ends them (the library gives
 * them up). */
int fake_library(u64 out, u64 in, long long n) {
	if (bad_ctx()) return 201;
	op_t o = {OP_LIB, out, in, (u64)n};
	enqueue(o); return 0;
}
void fake_hang(int on) { hang = on; }
void fake_abort(void) { for (int i = 0; i < queue.n; i++) queue.ops[i].arg[2] = 0; }
long long fake_queries(void) { return queries; }

/* What the fake has seen: launches, syncs, work queued and not run. */
void fake_counts(long long *out) { out[0] = launches; out[1] = syncs; out[2] = queue.n; }
