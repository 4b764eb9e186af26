package cuda

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// The tests here need an NVIDIA GPU; without one they are skipped with
// Available's error.

// newTestGPU opens the first GPU for a test and closes it after.
func newTestGPU(t *testing.T) *gpuBackend {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	b, err := newGPUBackend(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v; NVRTC %s (%s), cuBLAS %s, compiling for %s", b, b.nv.version, b.nv.path, b.blas.path, b.arch)
	t.Cleanup(func() {
		if err := b.close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if err := b.sync(); err == nil {
			t.Error("a closed backend syncs")
		}
	})
	return b
}

// encode is v as float32s (f32) or float64s, in the machine's order.
func encode(v []float64, f32 bool) []byte {
	var buf bytes.Buffer
	for _, x := range v {
		if f32 {
			binary.Write(&buf, binary.NativeEndian, float32(x))
		} else {
			binary.Write(&buf, binary.NativeEndian, x)
		}
	}
	return buf.Bytes()
}

// decode is the inverse of encode.
func decode(b []byte, f32 bool) []float64 {
	size := 8
	if f32 {
		size = 4
	}
	v := make([]float64, len(b)/size)
	for i := range v {
		if f32 {
			v[i] = float64(math.Float32frombits(binary.NativeEndian.Uint32(b[4*i:])))
		} else {
			v[i] = math.Float64frombits(binary.NativeEndian.Uint64(b[8*i:]))
		}
	}
	return v
}

// put allocates device memory holding data.
func put(t *testing.T, b *gpuBackend, data []byte) ptr {
	t.Helper()
	p, err := b.alloc(int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 {
		if err := b.upload(p, unsafe.Pointer(&data[0]), int64(len(data))); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// get downloads n bytes from p.
func get(t *testing.T, b *gpuBackend, p ptr, n int) []byte {
	t.Helper()
	out := make([]byte, n)
	if n == 0 {
		return out
	}
	if err := b.download(unsafe.Pointer(&out[0]), p, int64(n)); err != nil {
		t.Fatal(err)
	}
	return out
}

// twiceSource is a kernel of the shape the backend launches: b = 2a + 1,
// by a grid-stride loop.
const twiceSource = `extern "C" __global__ void k(const double *a, double *b, long long n) {
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
		b[i] = 2 * a[i] + 1;
}
`

// twice compiles twiceSource and returns its kernel.
func twice(t *testing.T, b *gpuBackend) function {
	t.Helper()
	m, err := b.compile(twiceSource)
	if err != nil {
		t.Fatal(err)
	}
	f, err := m.function("k")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func randomFloats(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// A kernel compiled by NVRTC runs on more elements than its grid has
// threads; compile errors carry NVRTC's log, and launch checks its
// arguments against the kernel's parameters.
func TestGPUKernel(t *testing.T) { testKernel(t, newTestGPU(t)) }

func testKernel(t *testing.T, b *gpuBackend) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 1000, 100003, 3 << 20} {
		a := randomFloats(rng, n)
		pa := put(t, b, encode(a, false))
		pb, err := b.alloc(int64(8 * n))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.launch(twice(t, b), int64(n), []uint64{uint64(pa), uint64(pb), uint64(n)}); err != nil {
			t.Fatal(err)
		}
		got := decode(get(t, b, pb, 8*n), false)
		for i := range n {
			if got[i] != 2*a[i]+1 {
				t.Fatalf("n=%d: b[%d] = %v, want %v", n, i, got[i], 2*a[i]+1)
			}
		}
		for _, p := range []ptr{pa, pb} {
			if err := b.free(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	m1, _ := b.compile(twiceSource)
	m2, _ := b.compile(twiceSource)
	if m1 != m2 {
		t.Error("the same source compiled twice is two modules")
	}
	f := twice(t, b).(*gpuFunction)
	t.Logf("kernel k: %d parameters (-1: the driver cannot say), all 8 bytes: %v", f.params, f.wide)
	if f.params >= 0 {
		if f.params != 3 || !f.wide {
			t.Errorf("k has 3 parameters of 8 bytes, not %d (wide %v)", f.params, f.wide)
		}
		if err := b.launch(f, 10, []uint64{1, 2}); err == nil || !strings.Contains(err.Error(), "2 arguments for its 3 parameters") {
			t.Errorf("launch with too few arguments: %v", err)
		}
	}
	if _, err := m1.function("nope"); err == nil || !strings.Contains(err.Error(), "cuModuleGetFunction") {
		t.Errorf("a missing kernel: %v", err)
	}
	_, err := b.compile("extern \"C\" __global__ void bad(double *a) { a[0] = undefined_name; }\n")
	if err == nil || !strings.Contains(err.Error(), "NVRTC_ERROR_COMPILATION (6)") || !strings.Contains(err.Error(), "undefined_name") {
		t.Errorf("a compile error: %v", err)
	}
	if err := b.launch("not a kernel", 1, nil); err == nil {
		t.Error("launching a string")
	}
	if err := b.sync(); err != nil {
		t.Fatal(err)
	}
}

// Uploads, downloads and copies of every size come back byte for byte:
// many small uploads that wrap the staging buffer, their sources reused at
// once, and transfers larger than it.
func TestGPUTransfers(t *testing.T) { testTransfers(t, newTestGPU(t)) }

func testTransfers(t *testing.T, b *gpuBackend) {
	rng := rand.New(rand.NewPCG(3, 4))
	const size = 8 << 20
	mirror := make([]byte, size)
	dev := put(t, b, mirror)
	src := make([]byte, 1<<16)
	total := 0
	for range 3000 {
		n := 1 + rng.IntN(len(src))
		off := rng.IntN(size - n)
		for i := range n {
			src[i] = byte(rng.Uint32())
		}
		copy(mirror[off:], src[:n])
		if err := b.upload(dev+ptr(off), unsafe.Pointer(&src[0]), int64(n)); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			src[i] = 0xAA // upload has copied src already
		}
		total += n
	}
	if got := get(t, b, dev, size); !bytes.Equal(got, mirror) {
		t.Fatalf("after %d bytes in 3000 uploads, the device differs from the host", total)
	}
	// A copy within the device, and a sub-range download.
	if err := b.copy(dev+1000, dev+5<<20, 12345); err != nil {
		t.Fatal(err)
	}
	copy(mirror[1000:], mirror[5<<20:5<<20+12345])
	if got := get(t, b, dev+999, 12347); !bytes.Equal(got, mirror[999:999+12347]) {
		t.Fatal("copy or sub-range download differs")
	}
	big := make([]byte, maxStage+maxStage/2+17)
	for i := range big {
		big[i] = byte(i*7 + i>>13)
	}
	pb := put(t, b, big)
	if got := get(t, b, pb, len(big)); !bytes.Equal(got, big) {
		t.Fatalf("a %d-byte transfer differs", len(big))
	}
	if b.stageCap != maxStage {
		t.Errorf("staging buffer of %d bytes after a large transfer, want %d", b.stageCap, maxStage)
	}
	empty, err := b.alloc(0)
	if err != nil || empty == 0 {
		t.Errorf("alloc(0): %#x, %v", empty, err)
	}
	if err := b.download(nil, empty, 0); err != nil {
		t.Errorf("an empty download: %v", err)
	}
	for _, p := range []ptr{dev, pb, empty} {
		if err := b.free(p); err != nil {
			t.Fatal(err)
		}
	}
}

// cuBLAS computes every shape of gemmCall as the naive product does:
// float32 to 1e-5, float64 to 1e-12, relative.
func TestGPUGemm(t *testing.T) { testGemm(t, newTestGPU(t)) }

func testGemm(t *testing.T, b *gpuBackend) {
	for _, f32 := range []bool{false, true} {
		tol := 1e-12
		if f32 {
			tol = 1e-5
		}
		for _, c := range gemmCases(f32) {
			g := c.g
			g.a, g.b, g.c = put(t, b, encode(c.a, f32)), put(t, b, encode(c.b, f32)), put(t, b, encode(c.cin, f32))
			if err := b.gemm(&g); err != nil {
				t.Fatalf("%v: %v", c, err)
			}
			out := encode(c.cin, f32)
			if err := c.check(decode(get(t, b, g.c, len(out)), f32), tol); err != nil {
				t.Error(err)
			}
			for _, p := range []ptr{g.a, g.b, g.c} {
				if err := b.free(p); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	bad := gemmCall{m: 2, n: 2, k: 2, lda: 1, ldb: 2, ldc: 2, batch: 1}
	if err := b.gemm(&bad); err == nil {
		t.Error("a gemm with lda < m")
	}
}

// recordCase is a step of work to record: x = 2a + 1 (a kernel), y = x (a
// copy), z = Y·Yᵀ (a gemm, Y being y as a 10×(n/10) column-major matrix).
type recordCase struct {
	b       *gpuBackend
	f       function
	n       int
	a, x, y ptr
	z       ptr
}

func newRecordCase(t *testing.T, b *gpuBackend) *recordCase {
	r := &recordCase{b: b, f: twice(t, b), n: 1000}
	for _, p := range []*ptr{&r.a, &r.x, &r.y, &r.z} {
		var err error
		if *p, err = b.alloc(int64(8 * r.n)); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func (r *recordCase) run() error {
	if err := r.b.launch(r.f, int64(r.n), []uint64{uint64(r.a), uint64(r.x), uint64(r.n)}); err != nil {
		return err
	}
	if err := r.b.copy(r.y, r.x, int64(8*r.n)); err != nil {
		return err
	}
	return r.b.gemm(&gemmCall{m: 10, n: 10, k: r.n / 10, a: r.y, lda: 10, b: r.y, ldb: 10, transB: true, c: r.z, ldc: 10, batch: 1})
}

// upload uploads new values of a and returns the z they give.
func (r *recordCase) upload(rng *rand.Rand) ([]float64, error) {
	a := randomFloats(rng, r.n)
	data := encode(a, false)
	if err := r.b.upload(r.a, unsafe.Pointer(&data[0]), int64(len(data))); err != nil {
		return nil, err
	}
	k := r.n / 10
	z := make([]float64, 100)
	for i := range 10 {
		for j := range 10 {
			for l := range k {
				z[i+10*j] += (2*a[i+10*l] + 1) * (2*a[j+10*l] + 1)
			}
		}
	}
	return z, nil
}

// set is upload, failing the test on an error.
func (r *recordCase) set(t *testing.T, rng *rand.Rand) []float64 {
	t.Helper()
	z, err := r.upload(rng)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func (r *recordCase) check(t *testing.T, what string, want []float64) {
	t.Helper()
	got := decode(get(t, r.b, r.z, 800), false)
	for i, w := range want {
		if math.Abs(got[i]-w) > 1e-12*max(1, math.Abs(w)) {
			t.Fatalf("%s: z[%d] = %v, want %v", what, i, got[i], w)
		}
	}
}

// record captures its work and returns a replay (a CUDA graph) that
// queues it, after later uploads too; without a graph (turned off, or a
// run that uploads) the replay runs the work itself.
func TestGPURecord(t *testing.T) { testRecord(t, newTestGPU(t)) }

func testRecord(t *testing.T, b *gpuBackend) {
	rng := rand.New(rand.NewPCG(5, 6))
	r := newRecordCase(t, b)
	want := r.set(t, rng)
	replay, err := b.record(r.run)
	if err != nil {
		t.Fatal(err)
	}
	if b.captureErr != nil {
		t.Errorf("record fell back to running again: %v", b.captureErr)
	}
	if err := replay(); err != nil {
		t.Fatal(err)
	}
	r.check(t, "first replay", want)
	for i := range 3 {
		want = r.set(t, rng)
		if err := replay(); err != nil {
			t.Fatal(err)
		}
		r.check(t, fmt.Sprintf("replay %d", i), want)
	}

	t.Setenv(graphsEnv, "0")
	replay, err = b.record(r.run)
	if err != nil || b.captureErr == nil {
		t.Fatalf("record with graphs off: %v, capture error %v", err, b.captureErr)
	}
	want = r.set(t, rng)
	if err := replay(); err != nil {
		t.Fatal(err)
	}
	r.check(t, "replay without a graph", want)
	t.Setenv(graphsEnv, "1")

	var next []float64
	uploading := func() error {
		z, err := r.upload(rng)
		if err != nil {
			return err
		}
		next = z
		return r.run()
	}
	replay, err = b.record(uploading)
	if err != nil || !errors.Is(b.captureErr, errCapturing) {
		t.Fatalf("record of a run that uploads: %v, capture error %v", err, b.captureErr)
	}
	if err := replay(); err != nil {
		t.Fatal(err)
	}
	r.check(t, "replay of a run that uploads", next)

	// What a graph saves: 20 small launches queued one by one, or
	// replayed as one graph.
	tiny := func() error {
		for range 20 {
			if err := b.launch(r.f, 1, []uint64{uint64(r.a), uint64(r.x), 1}); err != nil {
				return err
			}
		}
		return nil
	}
	graph, err := b.record(tiny)
	if err != nil || b.captureErr != nil {
		t.Fatalf("record: %v, capture error %v", err, b.captureErr)
	}
	for _, c := range []struct {
		name string
		f    func() error
	}{{"20 launches", tiny}, {"a graph of 20 launches", graph}} {
		start := time.Now()
		for range 200 {
			if err := c.f(); err != nil {
				t.Fatal(err)
			}
		}
		queued := time.Since(start)
		if err := b.sync(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %v to queue, %v with the GPU's work, each", c.name, queued/200, time.Since(start)/200)
	}
}

// The backend may be called from any goroutine, each on a thread of its
// own that no call has made the context current on.
func TestGPUThreads(t *testing.T) { testThreads(t, newTestGPU(t)) }

func testThreads(t *testing.T, b *gpuBackend) {
	f := twice(t, b)
	const n = 4096
	in := make([]float64, n)
	for i := range in {
		in[i] = float64(i)
	}
	pa, pb := put(t, b, encode(in, false)), put(t, b, make([]byte, 8*n))
	for g := range 8 {
		done := make(chan error)
		go func() {
			// Locked and never unlocked: the thread ends with the
			// goroutine, and the next one starts on another.
			runtime.LockOSThread()
			data := encode([]float64{float64(g)}, false)
			if err := b.upload(pa, unsafe.Pointer(&data[0]), 8); err != nil {
				done <- err
				return
			}
			if err := b.launch(f, n, []uint64{uint64(pa), uint64(pb), n}); err != nil {
				done <- err
				return
			}
			out := make([]byte, 16)
			if err := b.download(unsafe.Pointer(&out[0]), pb, 16); err != nil {
				done <- err
				return
			}
			if got := decode(out, false); got[0] != float64(2*g+1) || got[1] != 3 {
				done <- fmt.Errorf("goroutine %d: b = %v, want [%d 3]", g, got, 2*g+1)
				return
			}
			done <- nil
		}()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// Every fusion group's kernel from FusedSource compiles with NVRTC and
// computes what the CPU kernel does, float64 to 1e-12 and float32 to
// 1e-5 relative.
func TestGPUFusedSource(t *testing.T) {
	b := newTestGPU(t)
	groups := forEachFusedGroup(t, func(name string, fused *ops.FusedOp, in []graph.Type, dtype tensor.Dtype) {
		checkOnGPU(t, b, name, fused, in, dtype)
	})
	if groups < 6 {
		t.Fatalf("only %d fusion groups", groups)
	}
}

func checkOnGPU(t *testing.T, b *gpuBackend, name string, op *ops.FusedOp, in []graph.Type, dtype tensor.Dtype) {
	t.Helper()
	src, err := FusedSource("kernel", op, in)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	m, err := b.compile(src)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	f, err := m.function("kernel")
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	f32 := dtype == graph.Float32
	inputs, want := fusedCase(t, name, op, in, dtype)
	var args []uint64
	for _, x := range inputs {
		args = append(args, uint64(put(t, b, encode(graph.Float64s(x), f32))))
	}
	n := want[0].Shape().TotalSize()
	size := int(dtype.Size())
	out, err := b.alloc(int64(len(want) * size * n))
	if err != nil {
		t.Fatal(err)
	}
	for k := range want {
		args = append(args, uint64(out)+uint64(k*size*n))
	}
	fault, word, err := b.mapped(8)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.launch(f, int64(n), append(args, uint64(fault), 1, uint64(n))); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	checkFusedOutputs(t, name, src, get(t, b, out, len(want)*size*n), want, f32)
	if *(*int64)(word) != 0 {
		t.Fatalf("%s: the kernel reported a fault", name)
	}
	for _, a := range append(args[:len(inputs)], uint64(out)) {
		if err := b.free(ptr(a)); err != nil {
			t.Fatal(err)
		}
	}
}
