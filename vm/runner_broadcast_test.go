package vm_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// A parameter shaped like the built batch, (2, 3), added to x (2, 3):
// at one row, x (1, 3) would broadcast against it and give two rows.
// The Runner refuses the size, naming the op, the shapes, the sizes and
// the line that built the Add.
func TestRunnerRefusesBatchBroadcastAgainstBuiltSize(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	pv, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	p := g.Param("p", pv)
	y := ops.Add(x, p)
	r, err := vm.NewRunner([]*graph.Node{y}, nil, nil)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	require.NoError(t, r.Run(vm.Feeds{x: rows(rng, 2, 3)}))
	err = r.Run(vm.Feeds{x: rows(rng, 1, 3)})
	require.Error(t, err, "x (1,3) + p (2,3) broadcasts the batch to 2 rows")
	for _, want := range []string{"Add", "(1,3)", "(2,3)", "runner_broadcast_test.go:23", "batch size 1; the graph was built for 2"} {
		require.ErrorContains(t, err, want)
	}
	require.NoError(t, g.Err(), "a refused size must not poison the graph")
	require.NoError(t, r.Run(vm.Feeds{x: rows(rng, 2, 3)}), "the built size still runs")
}

// Broadcasts that do not spread the batch over a built size still run at
// every size, with the batch built for 3 rows and 3 features so that a
// feature axis has the built batch's size: a parameter (1,3) or (3), a
// mean over the batch kept as (1,3), a Where, and ops that reshape the
// batch (MatMul of the transpose, Concat). Values are computed here by
// hand at 1 and 5 rows.
func TestRunnerKeepsBroadcastsThatFollowTheBatch(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3, 3)
	row, _ := graph.FromFloat64s(graph.Float64, []float64{1, -2, 3}, 1, 3)
	vec, _ := graph.FromFloat64s(graph.Float64, []float64{0.5, 2, -1}, 3)
	p13, p3 := g.Param("p13", row), g.Param("p3", vec)
	outs := []*graph.Node{
		ops.Add(x, p13),
		ops.Mul(x, p3),
		ops.Sub(x, ops.MeanKeepDims(x, 0)),
		ops.Where(ops.Greater(x, p3), x, p13),
		ops.MatMul(ops.Transpose(x), x),
		ops.Concat(0, x, p13),
	}
	r, err := vm.NewRunner(outs, nil, nil)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 5, 3} {
		xv := rows(rng, n, 3)
		require.NoError(t, r.Run(vm.Feeds{x: xv}), "batch size %d", n)
		xs, ps, vs := xv.Data().([]float64), []float64{1, -2, 3}, []float64{0.5, 2, -1}
		mean := make([]float64, 3)
		for i, v := range xs {
			mean[i%3] += v / float64(n)
		}
		want := make([][]float64, len(outs))
		for i, v := range xs {
			c := i % 3
			want[0] = append(want[0], v+ps[c])
			want[1] = append(want[1], v*vs[c])
			want[2] = append(want[2], v-mean[c])
			if v > vs[c] {
				want[3] = append(want[3], v)
			} else {
				want[3] = append(want[3], ps[c])
			}
		}
		for a := range 3 {
			for b := range 3 {
				s := 0.0
				for k := range n {
					s += xs[3*k+a] * xs[3*k+b]
				}
				want[4] = append(want[4], s)
			}
		}
		want[5] = append(append([]float64(nil), xs...), ps...)
		for i, o := range outs {
			got, err := r.Value(o)
			require.NoError(t, err)
			require.InDeltaSlice(t, want[i], got.Data().([]float64), 1e-12, "output %d at batch size %d", i, n)
		}
	}
}

// The batch is spread over a built size by other broadcasting ops too:
// BroadcastTo a shape holding the batch, and the transpose of the batch
// plus a parameter whose size is the built batch's (x (3,3)ᵀ + p (3) is
// (3,3) at every size, not (3,b)), and a Where choosing from a parameter
// broadcast to (3,3). At other sizes than one, broadcasting fails outright.
func TestRunnerRefusesOtherBatchBroadcasts(t *testing.T) {
	vec, _ := graph.FromFloat64s(graph.Float64, []float64{0.5, 2, -1}, 3)
	for _, c := range []struct {
		name  string
		build func(x, p *graph.Node) *graph.Node
		want  []string
	}{
		{"BroadcastTo", func(x, _ *graph.Node) *graph.Node { return ops.BroadcastTo(x, 3, 3) }, []string{"BroadcastTo", "(1,3)", "(3,3)"}},
		{"transpose", func(x, p *graph.Node) *graph.Node { return ops.Add(ops.Transpose(x), p) }, []string{"Add", "(3,1) and (3)", "(3,3)"}},
		{"Where", func(x, p *graph.Node) *graph.Node {
			return ops.Where(ops.Greater(x, p), x, ops.BroadcastTo(p, 3, 3))
		}, []string{"Where", "(1,3) and (1,3) and (3,3)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", graph.Float64, 3, 3)
			p := g.Param("p", vec)
			r, err := vm.NewRunner([]*graph.Node{c.build(x, p)}, nil, nil)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(5, 6))
			require.NoError(t, r.Run(vm.Feeds{x: rows(rng, 3, 3)}))
			err = r.Run(vm.Feeds{x: rows(rng, 1, 3)})
			require.Error(t, err)
			for _, w := range append(c.want, "runner_broadcast_test.go:", "batch size 1; the graph was built for 3") {
				require.ErrorContains(t, err, w)
			}
			require.Error(t, r.Run(vm.Feeds{x: rows(rng, 5, 3)}), "5 rows do not broadcast against 3")
		})
	}
}

// A Reshape that holds the built batch in its leading axis, (4, -1) of x
// (4, 6), would give 4 rows of two examples each at 8 rows: the Runner
// refuses it, naming the Reshape's line; the flattening with -1 leading,
// read beside it, runs at every size with the examples' own rows.
func TestRunnerRefusesReshapeThatKeepsTheBuiltBatch(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4, 6)
	flat := ops.Reshape(x, -1, 2, 3)
	r, err := vm.NewRunner([]*graph.Node{flat}, nil, nil)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{8, 1, 4} {
		in := rows(rng, n, 6)
		require.NoError(t, r.Run(vm.Feeds{x: in}))
		got, err := r.Value(flat)
		require.NoError(t, err)
		require.Equal(t, []int{n, 2, 3}, []int(got.Shape()))
		require.Equal(t, in.Data(), got.Data(), "a reshape keeps the elements' order")
	}

	baked := ops.Reshape(x, 4, -1)
	r, err = vm.NewRunner([]*graph.Node{baked}, nil, nil)
	require.NoError(t, err)
	require.NoError(t, r.Run(vm.Feeds{x: rows(rng, 4, 6)}))
	err = r.Run(vm.Feeds{x: rows(rng, 8, 6)})
	require.Error(t, err, "Reshape(x, 4, -1) at 8 rows gives 4 rows of two examples")
	for _, want := range []string{"Reshape", "(8,6) to (4,12)", "runner_broadcast_test.go:154", "batch size 8; the graph was built for 4"} {
		require.ErrorContains(t, err, want)
	}
}
