package ops

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/parallel"
)

// Elementwise kernels split over threads compute the same bits as Forward,
// for sizes below, at and above the split threshold and a ragged last
// part, and allocate nothing once their task is made.
func TestElementwiseForwardExecMatchesForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pools := []*parallel.Pool{parallel.New(1), parallel.New(2), parallel.New(3)}
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	type opCase struct {
		op     graph.ExecForwarder
		scalar bool // second operand is a scalar
	}
	cases := []opCase{
		{op: unary{kind: tanhKind}}, {op: unary{kind: expKind}}, {op: unary{kind: scaleKind, c: 0.5}},
		{op: binary{addKind}}, {op: binary{mulKind}, scalar: true}, {op: binary{divKind}},
	}
	for _, dtype := range []tensor.Dtype{graph.Float32, graph.Float64} {
		for _, size := range []int{100, parallelMin - 1, parallelMin, 3*parallelChunk + parallelMin + 17} {
			for _, c := range cases {
				x := randomDense(rng, dtype, size)
				in := []*tensor.Dense{x}
				if _, ok := c.op.(binary); ok {
					y := randomDense(rng, dtype, size)
					if c.scalar {
						y = randomDense(rng, dtype)
					}
					in = append(in, y)
				}
				want := graph.NewDense(dtype, size)
				if err := c.op.(graph.Op).Forward(want, in); err != nil {
					t.Fatal(err)
				}
				for _, p := range pools {
					e := graph.NewExec(p)
					got := graph.NewDense(dtype, size)
					run := func() {
						if err := c.op.ForwardExec(e, got, in); err != nil {
							t.Fatal(err)
						}
					}
					run()
					if !slices.Equal(widened(got), widened(want)) {
						t.Errorf("%v %v size %d, %d threads: values differ from Forward", dtype, c.op, size, p.Threads())
					}
					if allocs := testing.AllocsPerRun(5, run); allocs != 0 {
						t.Errorf("%v %v size %d, %d threads: %v allocations, want 0", dtype, c.op, size, p.Threads(), allocs)
					}
				}
			}
		}
	}
}

// randomDense is a tensor of the shape with elements uniform in [-2, 2).
func randomDense(rng *rand.Rand, dtype tensor.Dtype, shape ...int) *tensor.Dense {
	return uniformDense(rng, -2, 2, dtype, shape...)
}

// uniformDense is a tensor of the shape with elements uniform in [lo, hi),
// drawn from rng in order (rounded to float32 for that dtype).
func uniformDense(rng *rand.Rand, lo, hi float64, dtype tensor.Dtype, shape ...int) *tensor.Dense {
	t := graph.NewDense(dtype, shape...)
	for i := range graph.ShapeSize(shape) {
		v := rng.Float64()*(hi-lo) + lo
		if dtype == graph.Float32 {
			t.Float32s()[i] = float32(v)
		} else {
			t.Float64s()[i] = v
		}
	}
	return t
}

// widened is a tensor's elements widened to float64, exactly.
func widened(t *tensor.Dense) []float64 {
	out := make([]float64, graph.ShapeSize(t.Shape()))
	for i := range out {
		out[i] = graph.Float(t, i)
	}
	return out
}
