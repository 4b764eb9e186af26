package dist

import (
	"fmt"
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

// checkMismatchedShapes (a child check, on every rank): a collective whose
// tensor has 3 + rank elements, another size on each rank, is an error on
// every rank naming both sizes; MPI took each rank's count as given, and
// rank 1 of an AllReduce, a Broadcast or an AllGather got a silently wrong
// tail (a Broadcast gave rank 0 no error). A float32 on one rank and a
// float64 on the others is one too. The Comm stays usable: the same
// collective of one size after it gives its values.
func checkMismatchedShapes(t *testing.T, c *Comm) {
	if c.Size() == 1 {
		t.Skip("one rank: no other to differ from")
	}
	n := 3 + c.Rank()
	other := 3 + c.Size() - 1 // the largest, told to every rank but the last
	if c.Rank() == c.Size()-1 {
		other = 3
	}
	feed := func(x *graph.Node, base float64) vm.Feeds {
		v := graph.NewDenseOf(x.Type())
		for i := range x.Type().Size() {
			graph.SetFloat(v, i, base+float64(i))
		}
		return vm.Feeds{x: v}
	}
	run := func(y, x *graph.Node, base float64) ([]float64, error) {
		p, err := compile.Compile([]*graph.Node{y})
		require.NoError(t, err)
		m, err := vm.New(p)
		require.NoError(t, err)
		if err := m.Run(feed(x, base)); err != nil {
			return nil, err
		}
		v, err := m.Value(y)
		require.NoError(t, err)
		return graph.Float64s(v), nil
	}
	for i, cs := range collectives {
		g := graph.New()
		x := g.Input("x", graph.Float64, c.Size()*n) // ReduceScatter splits it in Size() blocks
		if cs.name != "ReduceScatter" {
			x = g.Input("x", graph.Float64, n)
		}
		y := cs.build(c, x)
		_, err := run(y, x, 1)
		size := x.Type().Size()
		want := fmt.Sprintf("nabla: %s (node %v): dist: %s on %v: this rank's tensor has %d elements (%v), another rank's %d: "+
			"every rank must give a collective a tensor of the same shape (built at misuse_test.go:%d)",
			cs.name, y, cs.name, c, size, x.Type(), size/n*other, 21+i)
		require.EqualError(t, err, want, cs.name)
	}
	dtype := graph.Float64
	if c.Rank() == 0 {
		dtype = graph.Float32
	}
	g := graph.New()
	x := g.Input("x", dtype, 3)
	y := AllReduce(c, x, Sum)
	_, err := run(y, x, 1)
	want := "another rank's holds 32-bit elements: every rank must give a collective the same dtype"
	if c.Rank() == 0 {
		want = "another rank's holds 64-bit elements: every rank must give a collective the same dtype"
	}
	require.ErrorContains(t, err, fmt.Sprintf("dist: AllReduce on %v: this rank's tensor is %v, %s", c, x.Type(), want))
	g = graph.New()
	x = g.Input("x", graph.Float64, 3)
	got, err := run(AllReduce(c, x, Sum), x, float64(c.Rank()))
	require.NoError(t, err, "the collective after the mismatches")
	k := float64(c.Size())
	require.Equal(t, []float64{k * (k - 1) / 2, k*(k-1)/2 + k, k*(k-1)/2 + 2*k}, got)
}
