package dist

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/race"
	"github.com/nabla-go/nabla/internal/testkit/fdtest"
	"github.com/nabla-go/nabla/ops"
)

// waitEnv makes a child's collectives, in benchmarks alone, call MPI's
// blocking function on the caller's goroutine ("direct": no timeout)
// rather than poll.
const waitEnv = "NABLA_DIST_TEST_WAIT"

// setWaitMode sets c's waiting mode from waitEnv.
func setWaitMode(c *Comm) {
	if os.Getenv(waitEnv) == "direct" {
		c.mode = waitDirect
	}
}

// TestCrowdedAllocatesNothing: reading the machine's load, as a
// collective does every millisecond, allocates nothing.
func TestCrowdedAllocatesNothing(t *testing.T) {
	c := &Comm{cpus: 1 << 20}
	require.False(t, c.crowded(), "a million cpus crowded")
	c.cpus = 0
	c.crowded()
	if !race.Enabled {
		require.Zero(t, testing.AllocsPerRun(20, func() { c.crowded() }))
	}
}

// checkWaiting: every collective gives its values polling, with MPI's
// blocking functions taken away (a call would panic), and allocates
// nothing per call.
func checkWaiting(t *testing.T, c *Comm) {
	if c.Size() == 1 {
		t.Skip("one rank calls no MPI")
	}
	saved, mode := c.lib, c.mode
	defer func() { c.lib, c.mode = saved, mode }()
	polling := *saved
	polling.barrier, polling.allreduce, polling.bcast, polling.allgather = 0, 0, 0, 0
	polling.reduceScatterBlock, polling.reduce = 0, 0
	n := 1 << 16
	in := tensor.New(tensor.WithShape(n), tensor.Of(tensor.Float32))
	out := tensor.New(tensor.WithShape(n), tensor.Of(tensor.Float32))
	wide := tensor.New(tensor.WithShape(n*c.Size()), tensor.Of(tensor.Float32))
	for _, m := range []struct {
		name string
		lib  *library
		mode int
	}{{"poll", &polling, waitPoll}} {
		c.lib, c.mode = m.lib, m.mode
		checkCollectives(t, c)
		for i := range in.Float32s() {
			in.Float32s()[i] = float32(c.Rank() + 1)
		}
		a := [5]*agreement{newAgreement(), newAgreement(), newAgreement(), newAgreement(), newAgreement()}
		calls := map[string]func() error{
			"Barrier":       c.Barrier,
			"AllReduce":     func() error { return c.allReduce(out, in, Sum, a[0]) },
			"Broadcast":     func() error { return c.broadcast(out, in, 0, a[1]) },
			"ReduceTo":      func() error { return c.reduceTo(out, in, 0, a[2]) },
			"AllGather":     func() error { return c.allGather(wide, in, a[3]) },
			"ReduceScatter": func() error { return c.reduceScatter(out, wide, Mean, a[4]) },
		}
		// The same order on every rank.
		for _, name := range []string{"Barrier", "AllReduce", "Broadcast", "ReduceTo", "AllGather", "ReduceScatter"} {
			var err error
			allocs := testing.AllocsPerRun(20, func() {
				if e := calls[name](); e != nil {
					err = e
				}
			})
			require.NoError(t, err, "%s, %s", m.name, name)
			if !race.Enabled { // under it, purego's sync.Pool drops what it holds
				require.Zero(t, allocs, "%s: %s allocated", m.name, name)
			}
		}
		checkInPlace(t, c, m.name)
		// The last one's values: rank q's block of the mean of AllGather's
		// output, which holds q+1 in block q on every rank.
		for i, x := range out.Float32s() {
			if want := float32(c.Rank() + 1); x != want {
				t.Fatalf("%s: ReduceScatter(mean) element %d is %v, want %v", m.name, i, x, want)
			}
		}
	}
}

// checkInPlace: an all-reduce whose output is its input's buffer, as the
// compiler gives it (AllReduceOp.InPlace), sums the ranks' values there
// (MPI_IN_PLACE: MPICH rejects aliased buffers), directly and in a
// compiled program, whose all-reduce of a computed value takes its
// buffer.
func checkInPlace(t *testing.T, c *Comm, mode string) {
	k := c.Size()
	tri := float32(k * (k + 1) / 2) // Σ (q+1) over the ranks
	x := tensor.New(tensor.WithShape(1000), tensor.Of(tensor.Float32))
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(c.Rank()+1) * float32(i%5)
	}
	require.NoError(t, c.allReduce(x, x, Sum, nil), mode)
	for i, e := range x.Float32s() {
		if want := tri * float32(i%5); e != want {
			t.Fatalf("%s: element %d of the sum in place is %v, want %v", mode, i, e, want)
		}
	}
	g := graph.New()
	in := g.Input("x", graph.Float64, 2, 3)
	sum := AllReduce(c, ops.Scale(in, 2), Sum)
	got := fdtest.Evaluate(t, []*graph.Node{sum, Broadcast(c, ops.Scale(in, 3), 0)}, in, scaled(v, float64(c.Rank()+1)))
	require.InDeltaSlice(t, scaled(v, 2*float64(tri)), got[0], 1e-12, "%s: AllReduce(Scale(x, 2))", mode)
	require.InDeltaSlice(t, scaled(v, 3), got[1], 1e-12, "%s: Broadcast(Scale(x, 3))", mode)
}
