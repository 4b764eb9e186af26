package vm_test

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/testnet"
	"github.com/nabla-go/nabla/vm"
)

// A training step large enough for kernels to split their work (its
// hidden layer has 256·256 elements) computes the same bits with 1, 2 and
// 3 threads, and allocates nothing per run with any of them.
func TestThreadsGiveTheSameValuesWithoutAllocating(t *testing.T) {
	var want [][]float64
	for _, threads := range []int{1, 2, 3} {
		net, err := testnet.NewMLP(rand.New(rand.NewPCG(1, 2)), 256, 32, 256, 8)
		if err != nil {
			t.Fatal(err)
		}
		outs := append([]*graph.Node{net.Loss}, net.Grads...)
		p, err := compile.Compile(outs, compile.WithUpdates(net.Updates))
		if err != nil {
			t.Fatal(err)
		}
		m, err := vm.New(p, vm.WithThreads(threads))
		if err != nil {
			t.Fatal(err)
		}
		if m.Threads() != threads {
			t.Errorf("Threads() = %d, want %d", m.Threads(), threads)
		}
		var got [][]float64
		for range 2 { // the second run reads the first's updates
			if err := m.Run(net.Feeds); err != nil {
				t.Fatal(err)
			}
		}
		for _, n := range outs {
			v, err := m.Value(n)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, slices.Clone(v.Float64s()))
		}
		if want == nil {
			want = got
		}
		for i := range got {
			if !slices.Equal(got[i], want[i]) {
				t.Errorf("threads %d: output %d differs from 1 thread's", threads, i)
			}
		}
		if threads <= 2 {
			if n := testing.AllocsPerRun(10, func() { _ = m.Run(net.Feeds) }); n != 0 {
				t.Errorf("threads %d: %v allocations per run, want 0", threads, n)
			}
		}
		m.Close()
		if err := m.Run(net.Feeds); err != nil || m.Threads() != 1 {
			t.Errorf("after Close: Run = %v, Threads = %d; want a serial machine", err, m.Threads())
		}
	}
}

// A machine made without WithThreads uses GOMAXPROCS threads, but no more
// than the cpus the process may run on (runtime.NumCPU): a GOMAXPROCS set
// above them, as dist.Init sets 2 on a rank bound to one core, adds no
// kernel threads that would take turns on one core.
func TestDefaultThreadsAtMostNumCPU(t *testing.T) {
	net, err := testnet.NewMLP(rand.New(rand.NewPCG(1, 2)), 4, 2, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	p, err := compile.Compile([]*graph.Node{net.Loss})
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	cpus := runtime.NumCPU()
	for _, procs := range []int{1, cpus, cpus + 1, 2*cpus + 3} {
		runtime.GOMAXPROCS(procs)
		m, err := vm.New(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := min(procs, cpus); m.Threads() != want {
			t.Errorf("GOMAXPROCS %d, %d cpus: Threads() = %d, want %d", procs, cpus, m.Threads(), want)
		}
		m.Close()
	}
}
