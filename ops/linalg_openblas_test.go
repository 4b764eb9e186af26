//go:build openblas && linux

package ops_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/blaspeer"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// threadTicks is the CPU time, in clock ticks, each of the process's
// threads has used (/proc/self/task/*/stat: utime and stime).
func threadTicks(t *testing.T) map[string]int {
	t.Helper()
	dirs, err := filepath.Glob("/proc/self/task/*")
	if err != nil || len(dirs) == 0 {
		t.Skipf("no /proc/self/task: %v", err)
	}
	ticks := map[string]int{}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue // the thread ended
		}
		// Fields after the command, which is in parentheses: state is
		// field 3, utime 14 and stime 15.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		u, _ := strconv.Atoi(f[11])
		s, _ := strconv.Atoi(f[12])
		ticks[filepath.Base(d)] = u + s
	}
	return ticks
}

// ticksBetween is the CPU time the process's threads used between two
// readings of threadTicks.
func ticksBetween(before, after map[string]int) int {
	total := 0
	for id, v := range after {
		total += v - before[id]
	}
	return total
}

// A machine made WithThreads(n) runs its matrix products on n of
// OpenBLAS's threads: OpenBLAS reports n (openblas_get_num_threads), and
// during products of one thread a single thread of the process works,
// where OpenBLAS's own pool (one thread per core, or OPENBLAS_NUM_THREADS)
// would spread them. The products are checked against one computed with
// OpenBLAS directly.
func TestOpenBLASFollowsWithThreads(t *testing.T) {
	const n = 384
	g := graph.New()
	a, b := g.Input("a", graph.Float64, n, n), g.Input("b", graph.Float64, n, n)
	y := ops.MatMul(a, b)
	p, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	av, bv := make([]float64, n*n), make([]float64, n*n)
	for i := range av {
		av[i], bv[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	want := make([]float64, n*n)
	blaspeer.Gemm(n, n, n, av, bv, want)
	at, _ := graph.FromFloat64s(graph.Float64, av, n, n)
	bt, _ := graph.FromFloat64s(graph.Float64, bv, n, n)
	feeds := vm.Feeds{a: at, b: bt}

	for _, threads := range []int{3, 1, 2, 1} {
		m, err := vm.New(p, vm.WithThreads(threads))
		if err != nil {
			t.Fatal(err)
		}
		blaspeer.SetThreads(4) // as another program of the process might
		// Products until the process has used a quarter of a second of
		// CPU (25 ticks of 10 ms), or for 3 s at most, on one thread of
		// the process (a goroutine moves between them), once earlier
		// tests' garbage is collected and OpenBLAS's threads, which spin
		// a while after their last product, are asleep.
		runtime.GC()
		time.Sleep(300 * time.Millisecond)
		runtime.LockOSThread()
		before := threadTicks(t)
		after := before
		for start := time.Now(); ticksBetween(before, after) < 25 && time.Since(start) < 3*time.Second; {
			if err := m.Run(feeds); err != nil {
				t.Fatal(err)
			}
			after = threadTicks(t)
		}
		runtime.UnlockOSThread()
		if got := blaspeer.Threads(); got != threads {
			t.Errorf("WithThreads(%d): OpenBLAS reports %d threads", threads, got)
		}
		got, err := m.Value(y)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range graph.Float64s(got) {
			if v != want[i] {
				t.Fatalf("WithThreads(%d): element %d is %v, OpenBLAS alone gives %v", threads, i, v, want[i])
			}
		}
		if threads != 1 {
			continue
		}
		// The threads that did a tenth of the work or more.
		total, busy := ticksBetween(before, after), 0
		for id, v := range after {
			if d := v - before[id]; total > 0 && 10*d >= total {
				busy++
			}
		}
		if total < 25 {
			t.Logf("the products took %d ticks: too few to count the threads", total)
		} else if busy != 1 {
			t.Errorf("WithThreads(1): %d threads shared the products' %d ticks, want 1", busy, total)
		}
	}
}
