package dist

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// collectives builds each collective of c on x.
var collectives = []struct {
	name  string
	build func(c *Comm, x *graph.Node) *graph.Node
}{
	{"AllReduce", func(c *Comm, x *graph.Node) *graph.Node { return AllReduce(c, x, Mean) }},
	{"Broadcast", func(c *Comm, x *graph.Node) *graph.Node { return Broadcast(c, x, 0) }},
	{"ReduceTo", func(c *Comm, x *graph.Node) *graph.Node { return ReduceTo(c, x, 0) }},
	{"AllGather", func(c *Comm, x *graph.Node) *graph.Node { return AllGather(c, x) }},
	{"ReduceScatter", func(c *Comm, x *graph.Node) *graph.Node { return ReduceScatter(c, x, Sum) }},
}

// TestZeroComm: a Comm not made by Init (dist.Comm{}, of no ranks) is an
// error for every collective and method, as a nil one is; it gave an
// AllGather of no rows, and a ReduceScatter that divided by zero.
func TestZeroComm(t *testing.T) {
	zero := &Comm{}
	for _, cs := range collectives {
		g := graph.New()
		err := cs.build(zero, g.Input("x", graph.Float64, 2, 3)).Err()
		require.ErrorContains(t, err, "nabla: "+cs.name+": the Comm is zero (a dist.Comm{} of no ranks): get one from dist.Init")
		require.Contains(t, err.Error(), "misuse_test.go:", cs.name)
	}
	const want = " on a zero Comm (a dist.Comm{} of no ranks): get one from dist.Init"
	require.EqualError(t, zero.Barrier(), "dist: Barrier"+want)
	require.EqualError(t, zero.Close(), "dist: Close"+want)
	require.EqualError(t, zero.Save("x", nil, nil), "dist: Save"+want)
	require.EqualError(t, zero.BroadcastState(nil, nil, 0), "dist: BroadcastState"+want)
	var none *Comm
	require.Equal(t, 0, none.Rank())
	require.Equal(t, 0, none.Size())
	require.Equal(t, "a nil Comm", none.String())
	require.Equal(t, "none (a nil Comm)", none.Library())
}

// TestCollectivesAfterClose: a single process's collectives after Close
// are errors, as they are under MPI (they copied their input), and
// before it copy their input; Save and BroadcastState after Close are
// errors too, and Save writes nothing (it wrote the file, then failed).
func TestCollectivesAfterClose(t *testing.T) {
	c := single()
	x := []float64{1, 2, 3, 4, 5, 6}
	run := func(build func(c *Comm, x *graph.Node) *graph.Node) ([]float64, error) {
		g := graph.New()
		in := g.Input("x", graph.Float64, 2, 3)
		y := build(c, in)
		prog, err := compile.Compile([]*graph.Node{y})
		require.NoError(t, err)
		m, err := vm.New(prog)
		require.NoError(t, err)
		v, err := graph.FromFloat64s(graph.Float64, x, 2, 3)
		require.NoError(t, err)
		if err := m.Run(vm.Feeds{in: v}); err != nil {
			return nil, err
		}
		out, err := m.Value(y)
		require.NoError(t, err)
		return graph.Float64s(out), nil
	}
	for _, cs := range collectives {
		got, err := run(cs.build)
		require.NoError(t, err, cs.name)
		require.Equal(t, x, got, cs.name)
	}
	require.NoError(t, c.Close())
	path := filepath.Join(t.TempDir(), "state.safetensors")
	require.EqualError(t, c.Save(path, nil, nil), "dist: Save on rank 0 of 1 after Close")
	require.NoFileExists(t, path, "Save after Close wrote the checkpoint")
	require.EqualError(t, c.BroadcastState(nil, nil, 0), "dist: BroadcastState on rank 0 of 1 after Close")
	for _, cs := range collectives {
		_, err := run(cs.build)
		require.ErrorContains(t, err, "dist: "+cs.name+" on rank 0 of 1 after Close", cs.name)
		require.True(t, strings.HasPrefix(err.Error(), "nabla: "+cs.name+" (node "), "%v", err)
	}
}
