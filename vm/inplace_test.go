package vm_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// TestInPlaceUpdatesMatchCopies: updates computed in their parameters'
// slots give the same bits, run after run, as updates copied after the
// run (pass inplace switched off), with the outputs reading old values.
func TestInPlaceUpdatesMatchCopies(t *testing.T) {
	for _, dtype := range []graph.Type{graph.TypeOf(graph.Float32, 3, 5), graph.TypeOf(graph.Float64, 3, 5)} {
		g := graph.New()
		rng := rand.New(rand.NewPCG(1, 2))
		random := func() []float64 {
			v := make([]float64, dtype.Size())
			for i := range v {
				v[i] = rng.NormFloat64()
			}
			return v
		}
		param := func(name string) *graph.Node {
			return g.Param(name, dense(t, dtype.DType, dtype.Shape, random()...))
		}
		x := g.Input("x", dtype.DType, dtype.Shape...)
		p, mom, sq, q, r, e := param("p"), param("mom"), param("sq"), param("q"), param("r"), param("e")
		seen := ops.Mul(p, x) // an output reading p's old value, before p's update
		m1 := ops.Add(ops.Scale(mom, 0.9), ops.Scale(x, 0.1))
		v1 := ops.Add(ops.Scale(sq, 0.99), ops.Scale(ops.Square(x), 0.01))
		// The step reads mom and sq after m1 is computed: m1 cannot
		// overwrite mom where it is computed.
		p1 := ops.Sub(p, ops.Mul(ops.Div(m1, ops.Add(ops.Sqrt(v1), ops.Sqrt(ops.Abs(mom)))), g.Scalar(0.01, dtype.DType)))
		// q's update reads r's old value: r's is copied.
		updates := map[*graph.Node]*graph.Node{p: p1, mom: m1, sq: v1, q: r, r: ops.Neg(q), e: ops.Tanh(e)}
		feeds := vm.Feeds{x: dense(t, dtype.DType, dtype.Shape, random()...)}
		run := func(opts ...compile.Option) (*compile.Program, [][]float64) {
			prog, err := compile.Compile([]*graph.Node{seen}, append(opts, compile.WithUpdates(updates), compile.WithChecks())...)
			require.NoError(t, err)
			m, err := vm.New(prog, vm.WithThreads(1))
			require.NoError(t, err)
			var got [][]float64
			for range 3 {
				require.NoError(t, m.Run(feeds))
				for _, n := range []*graph.Node{seen, p, mom, sq, q, r, e} {
					v, err := m.Value(n)
					require.NoError(t, err)
					got = append(got, graph.Float64s(v))
				}
			}
			return prog, got
		}
		prog, inPlace := run()
		_, copied := run(compile.WithoutPass("inplace"))
		in := 0
		for _, u := range prog.Updates() {
			if u.From == u.Slot {
				in++
			}
		}
		require.Equal(t, 3, in, "updates computed in place (p, sq, e):\n%v", prog)
		for i := range copied {
			for j := range copied[i] {
				if math.Float64bits(inPlace[i][j]) != math.Float64bits(copied[i][j]) {
					t.Fatalf("%v: value %d, element %d: %v in place, %v copied", dtype, i, j, inPlace[i][j], copied[i][j])
				}
			}
		}
	}
}

// TestNaNCheckRestoresInPlaceUpdates: with WithNaNCheck, a run failing
// after an update was computed in its parameter's slot leaves the
// parameter as it was.
func TestNaNCheckRestoresInPlaceUpdates(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	p := g.Param("p", dense(t, graph.Float64, []int{2}, 1, 2))
	next := ops.Sub(p, x)
	y := ops.MatMul(ops.Reshape(ops.Log(next), 1, 2), ops.Reshape(next, 2, 1)) // NaN from a later instruction
	prog, err := compile.Compile([]*graph.Node{y}, compile.WithUpdates(map[*graph.Node]*graph.Node{p: next}))
	require.NoError(t, err)
	require.Equal(t, prog.Updates()[0].Slot, prog.Updates()[0].From, "p's update is computed in place:\n%v", prog)
	m, err := vm.New(prog, vm.WithNaNCheck())
	require.NoError(t, err)
	require.NoError(t, m.Run(vm.Feeds{x: dense(t, graph.Float64, []int{2}, 0.5, 0.5)}))
	for i, feed := range [][]float64{{0.25, 3}, {0.25, 0.25}} {
		err = m.Run(vm.Feeds{x: dense(t, graph.Float64, []int{2}, feed...)})
		if i == 1 {
			require.NoError(t, err)
			break
		}
		require.ErrorContains(t, err, "NaN")
		got, err := m.Get(p)
		require.NoError(t, err)
		require.Equal(t, []float64{0.5, 1.5}, got.Float64s(), "the failed run left p as it was")
	}
	got, err := m.Get(p)
	require.NoError(t, err)
	require.Equal(t, []float64{0.25, 1.25}, got.Float64s(), fmt.Sprint("a run after the failed one updates p"))
}
