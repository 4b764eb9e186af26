package dist

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// TestDetect reads rank and size from each launcher's variables, and
// rejects values that are not a rank of the group.
func TestDetect(t *testing.T) {
	cases := []struct {
		env        map[string]string
		rank, size int
		openMPI    bool
		ok         bool
		err        string
	}{
		{env: nil},
		{env: map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "3"}, rank: 1, size: 3, openMPI: true, ok: true},
		{env: map[string]string{"PMI_RANK": "2", "PMI_SIZE": "4"}, rank: 2, size: 4, ok: true},
		{env: map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "8"}, rank: 0, size: 8, ok: true},
		{env: map[string]string{"PMI_RANK": "2"}},
		{env: map[string]string{"PMI_RANK": "4", "PMI_SIZE": "4"}, err: "PMI_RANK=4 PMI_SIZE=4 are not a rank in [0, size)"},
		{env: map[string]string{"OMPI_COMM_WORLD_RANK": "x", "OMPI_COMM_WORLD_SIZE": "2"}, err: "not a rank"},
	}
	for _, c := range cases {
		l, ok, err := detect(func(k string) string { return c.env[k] })
		if c.err != "" {
			require.ErrorContains(t, err, c.err, "case %v", c.env)
			continue
		}
		require.NoError(t, err, "case %v", c.env)
		require.Equal(t, c.ok, ok, "case %v", c.env)
		if ok {
			require.Equal(t, []any{c.rank, c.size, c.openMPI}, []any{l.rank, l.size, l.openMPI}, "case %v", c.env)
		}
	}
}

// TestInitSingleProcess: a process no launcher started is rank 0 of 1,
// local rank 0 of 1, loads no library, and Init gives it the same Comm
// again; a nil or zero Comm has no local ranks.
func TestInitSingleProcess(t *testing.T) {
	if _, ok, _ := detect(getenvOS); ok {
		t.Skip("this test process was started by an MPI launcher")
	}
	c, err := Init()
	require.NoError(t, err)
	require.Equal(t, []int{0, 1}, []int{c.Rank(), c.Size()})
	require.Equal(t, []int{0, 1}, []int{c.LocalRank(), c.LocalSize()})
	var nilComm *Comm
	require.Equal(t, []int{0, 0, 0}, []int{nilComm.LocalRank(), nilComm.LocalSize(), (&Comm{}).LocalSize()})
	require.Nil(t, c.lib)
	require.Contains(t, c.Library(), "a single process")
	require.NoError(t, c.Barrier())
	again, err := Init()
	require.NoError(t, err)
	require.Same(t, c, again)
}

// TestClosed: a closed Comm's collectives are errors, and Init after the
// world's Close says MPI cannot start twice.
func TestClosed(t *testing.T) {
	c := single()
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	require.EqualError(t, c.Barrier(), "dist: Barrier on rank 0 of 1 after Close")
	worldMu.Lock()
	saved := world
	world = c
	worldMu.Unlock()
	defer func() { worldMu.Lock(); world = saved; worldMu.Unlock() }()
	_, err := Init()
	require.EqualError(t, err, "dist: Init after Close: MPI cannot be initialised twice in a process")
}

// TestOpErrors: the collectives' mistakes are build errors naming the op,
// the shapes and the caller's line.
func TestOpErrors(t *testing.T) {
	c := &Comm{size: 2, timeout: DefaultTimeout}
	cases := []struct {
		build func(x, ints *graph.Node) *graph.Node
		want  string
	}{
		{func(x, _ *graph.Node) *graph.Node { return AllReduce(nil, x, Sum) }, "AllReduce: the Comm is nil: get one from dist.Init"},
		{func(x, _ *graph.Node) *graph.Node { return AllReduce(c, x, Reduction(7)) }, "unknown reduction Reduction(7)"},
		{func(_, ints *graph.Node) *graph.Node { return AllReduce(c, ints, Sum) }, "AllReduce: int64(2) is not supported"},
		{func(x, _ *graph.Node) *graph.Node { return Broadcast(c, x, 2) }, "Broadcast: root 2 is not a rank of 2"},
		{func(x, _ *graph.Node) *graph.Node { return ReduceTo(c, x, -1) }, "ReduceTo: root -1 is not a rank of 2"},
		{func(x, _ *graph.Node) *graph.Node { return AllGather(c, ops.Sum(x)) }, "AllGather: gathers along the first axis, but x is a scalar"},
		{func(x, _ *graph.Node) *graph.Node { return ReduceScatter(c, x, Sum) }, "ReduceScatter: x (3,2) must have a first axis that the 2 ranks divide"},
		{func(x, _ *graph.Node) *graph.Node { return ReduceScatter(c, ops.Concat(0, x, x), Max) }, "ReduceScatter takes dist.Sum or dist.Mean"},
	}
	for _, cs := range cases {
		g := graph.New()
		err := cs.build(g.Input("x", graph.Float64, 3, 2), g.Input("i", graph.Int64, 2)).Err()
		require.ErrorContains(t, err, cs.want)
		require.True(t, strings.Contains(err.Error(), "comm_test.go:"), "error %q does not name the caller's line", err)
	}
	x := graph.New().Input("x", graph.Float64, 3, 2)
	require.Equal(t, []int{6, 2}, AllGather(c, x).Shape())
	require.Equal(t, []int{3, 2}, ReduceScatter(c, ops.Concat(0, x, x), Mean).Shape())
}

// TestSharesCores: a waiting rank yields its core where the launcher
// runs more ranks on the machine than it has cpus, or does not say how
// many it runs; it reads the machine's runnable threads from
// /proc/loadavg's text.
func TestSharesCores(t *testing.T) {
	for s, want := range map[string]int{"0.90 1.58 2.05 3/456 12345\n": 3, "15.61 10.96 7.95 17/1021 98": 17} {
		n, ok := runnableOf(s)
		require.True(t, ok, "loadavg %q", s)
		require.Equal(t, want, n, "loadavg %q", s)
	}
	for _, s := range []string{"", "0.90 1.58 2.05", "0.90 1.58 2.05 x/3 1", "0.90 1.58 2.05 3 1"} {
		_, ok := runnableOf(s)
		require.False(t, ok, "loadavg %q", s)
	}
	for s, want := range map[string]int{"0-1\n": 2, "0": 1, "0-15,32-47": 32, "0,2,4-5": 4, "": 0, "1-0": 0, "x": 0, "0-": 0} {
		require.Equal(t, want, cpuListSize(s), "cpu list %q", s)
	}
	cases := []struct {
		env   map[string]string
		cpus  int
		share bool
	}{
		{map[string]string{"OMPI_COMM_WORLD_LOCAL_SIZE": "2"}, 2, false},
		{map[string]string{"OMPI_COMM_WORLD_LOCAL_SIZE": "3"}, 2, true},
		{map[string]string{"MPI_LOCALNRANKS": "2"}, 16, false},
		{map[string]string{"MPI_LOCALNRANKS": "17"}, 16, true},
		{map[string]string{"MPI_LOCALNRANKS": "x"}, 16, true},
		{nil, 64, true},
	}
	for _, c := range cases {
		require.Equal(t, c.share, sharesCores(func(k string) string { return c.env[k] }, c.cpus), "%v on %d cpus", c.env, c.cpus)
	}
}

// TestOpenMPISettings: Init picks Open MPI's ring for its nonblocking
// all-reduce on 2 and 3 ranks, and leaves Open MPI's choice to it from 4
// ranks on, for a single process, and where the environment sets one.
func TestOpenMPISettings(t *testing.T) {
	unset := func(string) string { return "" }
	ring := [][2]string{{"OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1"}}
	require.Equal(t, ring, openMPISettings(2, unset))
	require.Equal(t, ring, openMPISettings(3, unset))
	for _, size := range []int{1, 4, 64} {
		require.Empty(t, openMPISettings(size, unset), "%d ranks", size)
	}
	set := func(k string) string {
		if k == "OMPI_MCA_coll_libnbc_iallreduce_algorithm" {
			return "4"
		}
		return ""
	}
	require.Empty(t, openMPISettings(2, set), "the user's choice")
}
