package vm_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// fusedLogChain compiles exp(log(x)·2) + 1 for x of two elements: one
// fused instruction over four nodes, the log named "logx".
func fusedLogChain(t *testing.T, opts ...vm.Option) (*vm.Machine, *graph.Node, []*graph.Node) {
	t.Helper()
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	logx := ops.Log(x).SetName("logx")
	scaled := ops.Scale(logx, 2)
	e := ops.Exp(scaled)
	y := ops.Add(e, g.Scalar(1, graph.Float64))
	p, err := compile.Compile([]*graph.Node{y})
	require.NoError(t, err)
	require.Len(t, p.Instructions(), 1)
	m, err := vm.New(p, opts...)
	require.NoError(t, err)
	return m, x, []*graph.Node{logx, scaled, e, y}
}

// A NaN made inside a fused instruction is blamed on the node that made
// it, not on the instruction's last node.
func TestNaNCheckNamesTheFusedNode(t *testing.T) {
	m, x, _ := fusedLogChain(t, vm.WithNaNCheck())
	err := m.Run(vm.Feeds{x: dense(t, graph.Float64, []int{2}, 1, -1)})
	require.ErrorContains(t, err, `Log "logx"`)
	require.ErrorContains(t, err, "in Fused(Log,Scale,Exp,Add)")
	require.ErrorContains(t, err, "output element 1 is NaN")
	require.ErrorContains(t, err, "fused_test.go:")
	// An infinity made later is blamed on the Exp.
	err = m.Run(vm.Feeds{x: dense(t, graph.Float64, []int{2}, 1e300, 1)})
	require.ErrorContains(t, err, "nabla: Exp (node Exp #")
	require.ErrorContains(t, err, "output element 0 is +Inf")
}

// The profile's entry for a fused instruction lists the nodes it fuses.
func TestProfileListsFusedNodes(t *testing.T) {
	m, x, nodes := fusedLogChain(t, vm.WithProfile())
	require.NoError(t, m.Run(vm.Feeds{x: dense(t, graph.Float64, []int{2}, 1, 2)}))
	e := m.Profile().Entries[0]
	require.Equal(t, "Fused(Log,Scale,Exp,Add)", e.Op)
	require.Equal(t, nodes, e.Fused)
	require.Equal(t, nodes[3], e.Node)
	require.Equal(t, int64(1), e.Runs)
	require.Equal(t, graph.Cost{Flops: 8, BytesRead: 24, BytesWritten: 16}, e.Cost)
}

// A bad value made by a fused instruction's last node: the message lists
// the nodes it fuses.
func TestNaNCheckListsTheFusedNodes(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := ops.Mul(ops.Neg(x).SetName("negx"), x)
	p, err := compile.Compile([]*graph.Node{y})
	require.NoError(t, err)
	m, err := vm.New(p, vm.WithNaNCheck())
	require.NoError(t, err)
	err = m.Run(vm.Feeds{x: dense(t, graph.Float64, []int{2}, 1, 1e200)})
	require.ErrorContains(t, err, "nabla: Mul (node Mul #")
	require.ErrorContains(t, err, `which fuses Neg "negx" #`)
	require.ErrorContains(t, err, "output element 1 is -Inf")
}
