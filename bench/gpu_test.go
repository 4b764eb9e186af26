package bench

import (
	"fmt"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/cuda"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// gpuMachine makes a machine for prog on the first GPU, or skips the
// benchmark with the reason none can be used.
func gpuMachine(b *testing.B, prog *compile.Program) *vm.Machine {
	b.Helper()
	dev, err := cuda.Open(0)
	if err != nil {
		b.Skipf("no GPU: %v", err)
	}
	b.Cleanup(func() { dev.Close() })
	m, err := vm.New(prog, vm.OnDevice(dev))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.Close)
	return m
}

// benchSyncedRuns times a step that ends with its output read back: the
// GPU's work is queued by Run and waited for by Value, so each step's
// time is the device's whole step, copies included.
func benchSyncedRuns(b *testing.B, m *vm.Machine, feeds vm.Feeds, out *graph.Node) {
	b.Helper()
	b.ReportAllocs()
	step := func() error {
		if err := m.Run(feeds); err != nil {
			return err
		}
		_, err := m.Value(out)
		return err
	}
	warmUp(b, step)
	for b.Loop() {
		if err := step(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGPU times W1's training step (both dtypes, SGD and Adam's
// forms: PyTorch's, the correction folded, float32 moments) and
// W3's Hessian–vector product and Hessian on the first GPU, each step
// waited for: the targets are W1 ≤ 60 µs (float32) and ≤ 80 µs
// (float64), W3's HVP ≤ 30 µs; Vmap of W3's gradient over 64 points
// against 64 runs, each read back (target ≥ 10×: BenchmarkW3Vmap's on the
// GPU); and the LSTM workload's forward and backward pass
// (BenchmarkLSTM's). It skips where no GPU can be used.
func BenchmarkGPU(b *testing.B) {
	for _, dtype := range dtypes {
		for _, opt := range w1Optimizers {
			b.Run(fmt.Sprintf("W1/%s/%s", dtypeName(dtype), opt), func(b *testing.B) {
				m := newW1Model(dtype, w1Sizes, w1Batch, 1)
				benchSyncedRuns(b, gpuMachine(b, m.program(b, opt)), m.feeds, m.loss)
				reportTime(b, 1e3, "µs/step")
			})
		}
	}
	for _, q := range []string{"grad", "hvp", "hessian"} {
		b.Run("W3/"+q, func(b *testing.B) {
			prog, feeds, out := newW3Network().program(b, q)
			benchSyncedRuns(b, gpuMachine(b, prog), feeds, out)
			reportTime(b, 1e3, "µs/op")
		})
	}
	b.Run("W3Vmap", func(b *testing.B) {
		n := newW3Network()
		prog, _, out := n.program(b, "grad")
		single := gpuMachine(b, prog)
		vprog, feeds, vout := n.vmappedGradientProgram(b)
		batched := gpuMachine(b, vprog)
		timeSeparateAndVmap(b, single, n.vmapPointFeeds(), batched, feeds, out, vout)
	})
	b.Run("LSTM/f32", func(b *testing.B) {
		p := newLSTMProblem(b, graph.Float32)
		benchSyncedRuns(b, gpuMachine(b, p.prog), p.feeds, p.loss)
		reportTime(b, 1e6, "ms/step")
	})
}

// TestW3VmapOnDevice checks BenchmarkGPU/W3Vmap's programs on a device
// (the GPU, or the host stand-in where there is none): the vmapped
// gradient equals the gradient's program run at each point on the CPU,
// and no instruction of either falls back to the host, so the benchmark
// times the device's work.
func TestW3VmapOnDevice(t *testing.T) {
	dev, err := cuda.OpenOrHost()
	if err != nil {
		t.Skipf("no device: %v", err)
	}
	defer dev.Close()
	n := newW3Network()
	prog, _, out := n.program(t, "grad")
	vprog, feeds, vout := n.vmappedGradientProgram(t)
	cpu := newMachine(t, prog, 1)
	defer cpu.Close()
	for _, p := range []*compile.Program{prog, vprog} {
		m, err := vm.New(p, vm.OnDevice(dev))
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		for i, in := range p.Instructions() {
			if m.OnHost(i) {
				t.Errorf("%s (%v) runs on the host", in.Name(), in.Node)
			}
		}
		if p != vprog {
			continue
		}
		if err := m.Run(feeds); err != nil {
			t.Fatal(err)
		}
		v, err := m.Value(vout)
		if err != nil {
			t.Fatal(err)
		}
		got := graph.Float64s(v)
		for i, f := range n.vmapPointFeeds() {
			if err := cpu.Run(f); err != nil {
				t.Fatal(err)
			}
			w, err := cpu.Value(out)
			if err != nil {
				t.Fatal(err)
			}
			for j, want := range graph.Float64s(w) {
				if d := got[i*w3Dim+j] - want; d > 1e-13 || d < -1e-13 {
					t.Fatalf("point %d, element %d: %v on %v, %v on the CPU", i, j, got[i*w3Dim+j], dev, want)
				}
			}
		}
	}
}
