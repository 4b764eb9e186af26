package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// Vmap of W3's gradient: the gradient of W3's function at 64 points,
// from one program that compile.Vmap batches (its matrix–vector products
// become matrix products), against 64 runs of the gradient's program.

const w3VmapBatch = 64

// w3VmapPoints are the 64 points, one after another.
func w3VmapPoints() []float64 { return uniform(37, w3VmapBatch*w3Dim, 1) }

// vmappedGradient compiles the gradient at w3VmapBatch points at once,
// with opts; it returns the program's feeds and the node computed too.
func (n *w3Network) vmappedGradient(tb testing.TB, opts ...compile.Option) (*vm.Machine, vm.Feeds, *graph.Node) {
	tb.Helper()
	prog, feeds, out := n.vmappedGradientProgram(tb, opts...)
	return newMachine(tb, prog, 1), feeds, out
}

// vmappedGradientProgram is vmappedGradient's program, for a machine of
// the caller's choosing.
func (n *w3Network) vmappedGradientProgram(tb testing.TB, opts ...compile.Option) (*compile.Program, vm.Feeds, *graph.Node) {
	tb.Helper()
	g := graph.New()
	xs := g.Input("xs", graph.Float64, w3VmapBatch, 1, w3Dim)
	grads, err := compile.Vmap(func(x []*graph.Node) []*graph.Node {
		grad, err := compile.Grad(n.function(x[0]), x[0])
		if err != nil {
			tb.Fatal(err)
		}
		return grad
	}, []*graph.Node{xs}, nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	prog, err := compile.Compile(grads, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	feeds := vm.Feeds{xs: mustDense(graph.Float64, w3VmapPoints(), w3VmapBatch, 1, w3Dim)}
	return prog, feeds, grads[0]
}

// TestW3Vmap checks that the vmapped gradient equals the gradient's
// program run at each point, and that Vmap batched every op by its rule
// (no loop over the points). Compiled without the matmuladd pass, the two
// agree bit for bit (with nabla's own GEMM; OpenBLAS's gemv and gemm
// round apart, see exactProducts). With it, each adds its bias as the product is formed
// (MatMulAdd), and they round differently: a one-row product (the
// separate runs') accumulates the products onto the bias, one depth step
// after another (gemm's axpy path), while the 64-row product (Vmap's)
// sums the products and then adds the bias. They then agree to a few
// units in the last place.
func TestW3Vmap(t *testing.T) {
	exact := 0.0
	if !exactProducts {
		exact = 1e-14
	}
	for _, c := range []struct {
		opts []compile.Option
		tol  float64
	}{{[]compile.Option{compile.WithoutPass("matmuladd")}, exact}, {nil, 1e-14}} {
		n := newW3Network()
		batched, feeds, out := n.vmappedGradient(t, c.opts...)
		if err := batched.Run(feeds); err != nil {
			t.Fatal(err)
		}
		got, err := batched.Value(out)
		if err != nil {
			t.Fatal(err)
		}
		batched.Close()
		for _, node := range out.Graph().Nodes() {
			if node.OpName() == "Scan" {
				t.Errorf("the vmapped gradient loops: %v", node)
			}
		}
		grad, err := compile.Grad(n.f, n.x)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := compile.Compile(grad, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		m := newMachine(t, prog, 1)
		points, all := w3VmapPoints(), graph.Float64s(got)
		for b := range w3VmapBatch {
			if err := m.Run(vm.Feeds{n.x: mustDense(graph.Float64, points[b*w3Dim:(b+1)*w3Dim], 1, w3Dim)}); err != nil {
				t.Fatal(err)
			}
			want, err := m.Value(grad[0])
			if err != nil {
				t.Fatal(err)
			}
			assertClose(t, fmt.Sprintf("vmapped gradient %d (tolerance %g)", b, c.tol), all[b*w3Dim:(b+1)*w3Dim], graph.Float64s(want), c.tol)
		}
		m.Close()
	}
}

// BenchmarkW3Vmap measures Vmap's target: the time of 64 runs of W3's
// gradient, one point each, over that of one run of its Vmap at the 64
// points (one thread), as the median of rounds' ratios (see
// BenchmarkW3Ratios), and each time's median in µs. Both compute the same
// flops, 64 × 4 products of a 64-vector by a 64×64 matrix: what Vmap
// saves is the runs' overhead and the matrix–vector products' loads, not
// arithmetic.
func BenchmarkW3Vmap(b *testing.B) {
	n := newW3Network()
	batched, feeds, _ := n.vmappedGradient(b)
	defer batched.Close()
	m, _, _ := n.machine(b, "grad", 1)
	defer m.Close()
	timeSeparateAndVmap(b, m, n.vmapPointFeeds(), batched, feeds)
}

// vmapPointFeeds are the separate runs' feeds: x at each of the points.
func (n *w3Network) vmapPointFeeds() []vm.Feeds {
	points := w3VmapPoints()
	each := make([]vm.Feeds, w3VmapBatch)
	for i := range each {
		each[i] = vm.Feeds{n.x: mustDense(graph.Float64, points[i*w3Dim:(i+1)*w3Dim], 1, w3Dim)}
	}
	return each
}

// timeSeparateAndVmap times, each benchmark iteration, the runs of single
// on each feed one after another and one run of batched on feeds, and
// reports the medians: their ratio (separate/vmap) and each in µs. Where
// reads holds the two machines' outputs (single's, then batched's), each
// run ends by reading its output back, as a run on a GPU must to be waited
// for.
func timeSeparateAndVmap(b *testing.B, single *vm.Machine, each []vm.Feeds, batched *vm.Machine, feeds vm.Feeds, reads ...*graph.Node) {
	machines := []*vm.Machine{single, batched}
	run := func(m *vm.Machine, f vm.Feeds) {
		if err := m.Run(f); err != nil {
			b.Fatal(err)
		}
		for i, out := range reads {
			if machines[i] != m {
				continue
			}
			if _, err := m.Value(out); err != nil {
				b.Fatal(err)
			}
		}
	}
	var ratios, separateUs, vmapUs []float64
	for b.Loop() {
		start := time.Now()
		for _, f := range each {
			run(single, f)
		}
		separate := time.Since(start)
		start = time.Now()
		run(batched, feeds)
		once := time.Since(start)
		ratios = append(ratios, float64(separate)/float64(once))
		separateUs, vmapUs = append(separateUs, float64(separate)/1e3), append(vmapUs, float64(once)/1e3)
	}
	b.ReportMetric(median(ratios), "separate/vmap")
	b.ReportMetric(median(separateUs), "separate-us")
	b.ReportMetric(median(vmapUs), "vmap-us")
}

// vmappedHessian compiles W3's Hessian as Vmap of its Hessian–vector
// product over the 64 unit vectors: the batched forward sweep that
// compile.Hessian runs, written as a Vmap of one direction's.
func (n *w3Network) vmappedHessian(tb testing.TB) (*vm.Machine, *graph.Node) {
	tb.Helper()
	eye := make([]float64, w3Dim*w3Dim)
	for i := range w3Dim {
		eye[i*w3Dim+i] = 1
	}
	units := n.x.Graph().Const(mustDense(graph.Float64, eye, w3Dim, 1, w3Dim))
	hessian, err := compile.Vmap(func(in []*graph.Node) []*graph.Node {
		v, x := in[0], in[1]
		hv, err := compile.HVP(n.function(x), x, v)
		if err != nil {
			tb.Fatal(err)
		}
		return []*graph.Node{hv}
	}, []*graph.Node{units, n.x}, []int{0, compile.NotBatched}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	prog, err := compile.Compile(hessian)
	if err != nil {
		tb.Fatal(err)
	}
	return newMachine(tb, prog, 1), hessian[0]
}

// TestW3VmapHessian checks that Vmap of the Hessian–vector product over
// the unit vectors equals compile.Hessian bit for bit.
func TestW3VmapHessian(t *testing.T) {
	n := newW3Network()
	m, feeds, want := n.machine(t, "hessian", 1)
	defer m.Close()
	v, got := n.vmappedHessian(t)
	defer v.Close()
	if err := m.Run(feeds); err != nil {
		t.Fatal(err)
	}
	if err := v.Run(feeds); err != nil {
		t.Fatal(err)
	}
	a, _ := m.Value(want)
	b, _ := v.Value(got)
	assertClose(t, "Vmap of HVP", graph.Float64s(b), graph.Float64s(a), 0)
}

// BenchmarkW3VmapHessian times Vmap of the Hessian–vector product over
// the unit vectors against compile.Hessian's batched forward sweep (one
// thread), as the median of rounds' ratios.
func BenchmarkW3VmapHessian(b *testing.B) {
	n := newW3Network()
	m, feeds, _ := n.machine(b, "hessian", 1)
	defer m.Close()
	v, _ := n.vmappedHessian(b)
	defer v.Close()
	var ratios []float64
	for b.Loop() {
		start := time.Now()
		if err := m.Run(feeds); err != nil {
			b.Fatal(err)
		}
		sweep := time.Since(start)
		start = time.Now()
		if err := v.Run(feeds); err != nil {
			b.Fatal(err)
		}
		ratios = append(ratios, float64(time.Since(start))/float64(sweep))
	}
	b.ReportMetric(median(ratios), "vmap/hessian")
}
