package vm_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/testnet"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// profiled compiles sum(tanh(x·W)) for x (3,4) and W (4,5) into a
// profiling machine: three instructions, MatMul, Tanh and Sum.
func profiled(t *testing.T) (*vm.Machine, vm.Feeds) {
	t.Helper()
	g := graph.New()
	x := g.Input("x", graph.Float64, 3, 4)
	w := g.Param("W", graph.NewDense(graph.Float64, 4, 5))
	y := ops.Sum(ops.Tanh(ops.MatMul(x, w).SetName("xw")))
	p, err := compile.Compile([]*graph.Node{y})
	require.NoError(t, err)
	require.Len(t, p.Instructions(), 3)
	m, err := vm.New(p, vm.WithProfile())
	require.NoError(t, err)
	return m, vm.Feeds{x: graph.NewDense(graph.Float64, 3, 4)}
}

// TestProfile: every instruction appears once, counted once per run, with
// a positive time and its op's cost.
func TestProfile(t *testing.T) {
	m, feeds := profiled(t)
	const runs = 4
	for range runs {
		require.NoError(t, m.Run(feeds))
	}
	p := m.Profile()
	require.Len(t, p.Entries, 3)
	want := []struct {
		op   string
		cost graph.Cost
	}{
		// (3,4)·(4,5): 2·3·5·4 flops, (12+20)·8 bytes read, 15·8 written.
		{"MatMul", graph.Cost{Flops: 120, BytesRead: 256, BytesWritten: 120}},
		{"Tanh", graph.Cost{Flops: 15, BytesRead: 120, BytesWritten: 120}},
		{"Sum", graph.Cost{Flops: 15, BytesRead: 120, BytesWritten: 8}},
	}
	for i, e := range p.Entries {
		if e.Instruction != i || e.Op != want[i].op || e.Cost != want[i].cost {
			t.Errorf("case %d: got %v %v %+v, want %d %v %+v", i, e.Instruction, e.Op, e.Cost, i, want[i].op, want[i].cost)
		}
		if e.Runs != runs {
			t.Errorf("case %v: got %d runs, want %d", e.Op, e.Runs, runs)
		}
		if e.Total <= 0 || e.Mean() != e.Total/runs || e.GFLOPS() <= 0 {
			t.Errorf("case %v: got total %v, mean %v, %v GFLOP/s, want them positive", e.Op, e.Total, e.Mean(), e.GFLOPS())
		}
	}
	require.Equal(t, "xw", p.Entries[0].Node.Name())
	require.Contains(t, p.Entries[0].Site, "profile_test.go:")

	sorted := p.ByTotal()
	require.Len(t, sorted, 3)
	seen := map[int]bool{}
	for i, e := range sorted {
		seen[e.Instruction] = true
		if i > 0 && e.Total > sorted[i-1].Total {
			t.Errorf("case %d: %v after %v, want largest first", i, e.Total, sorted[i-1].Total)
		}
	}
	require.Len(t, seen, 3, "each instruction once")
	require.Equal(t, p.Entries[0].Total+p.Entries[1].Total+p.Entries[2].Total, p.Total())

	m.ResetProfile()
	for _, e := range m.Profile().Entries {
		require.Zero(t, e.Runs, "after reset")
		require.Zero(t, e.Total, "after reset")
	}
	require.NoError(t, m.Run(feeds))
	require.EqualValues(t, 1, m.Profile().Entries[0].Runs)
}

// TestProfileOff: without WithProfile, nothing is counted.
func TestProfileOff(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	m := machine(t, []*graph.Node{ops.Exp(x)})
	require.NoError(t, m.Run(vm.Feeds{x: graph.NewDense(graph.Float64, 2)}))
	p := m.Profile()
	require.Len(t, p.Entries, 1)
	require.Equal(t, "Exp", p.Entries[0].Op)
	require.Zero(t, p.Entries[0].Runs)
}

// TestProfileTable: the table names every op and node, and top keeps the
// slowest rows and sums up the rest.
func TestProfileTable(t *testing.T) {
	m, feeds := profiled(t)
	require.NoError(t, m.Run(feeds))
	var b bytes.Buffer
	require.NoError(t, m.Profile().WriteTable(&b, 0))
	text := b.String()
	for _, want := range []string{"3 instructions", "GFLOP/s", "MatMul", "Tanh", "Sum", `"xw" profile_test.go:`, "(3,5)"} {
		require.Contains(t, text, want)
	}
	require.Len(t, strings.Split(strings.TrimSpace(text), "\n"), 5, "a title, a header and 3 rows:\n%s", text)

	b.Reset()
	require.NoError(t, m.Profile().WriteTable(&b, 1))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 4, "a title, a header, a row and the rest:\n%s", b.String())
	require.Contains(t, lines[2], m.Profile().ByTotal()[0].Op)
	require.Contains(t, lines[3], " 2 more ")

	require.ErrorIs(t, m.Profile().WriteTable(failingWriter{}, 0), errFailing)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errFailing }

// TestProfiledRunDoesNotAllocate: a training step allocates nothing after
// the first run, profiled or not.
func TestProfiledRunDoesNotAllocate(t *testing.T) {
	net, err := testnet.NewMLP(rand.New(rand.NewPCG(1, 3)), 8, 5, 6, 3)
	require.NoError(t, err)
	p, err := compile.Compile([]*graph.Node{net.Loss}, compile.WithUpdates(net.Updates))
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		opts []vm.Option
	}{{"off", nil}, {"on", []vm.Option{vm.WithProfile()}}} {
		m, err := vm.New(p, c.opts...)
		require.NoError(t, err)
		require.NoError(t, m.Run(net.Feeds))
		if got := testing.AllocsPerRun(10, func() { _ = m.Run(net.Feeds) }); got != 0 {
			t.Errorf("case %s: got %v allocations per run, want 0", c.name, got)
		}
	}
}
