package bench

import (
	"fmt"
	"math"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Vmap of a While: Newton's method for x³ + x + A·x = y (elementwise
// cubes, A coupling x's elements), from x = y until |F|² ≤ 1e-20 (at
// most 30 steps), for 64 right-hand sides y of sizes from 0.01 to 87, so
// that the examples take from 2 to 12 steps (x of 8 elements). One
// program from compile.Vmap (a loop over the batch's steps, running
// while any example does, its products and solves batched) against 64
// runs of the one-example program. The batch's loop runs every example
// for as many steps as the slowest takes (a finished one's step is
// computed and discarded): where the step's arithmetic dominates (8
// elements and an LU solve), Vmap saves the runs' overhead but does
// about twice the arithmetic here; where it does not (1 element), the
// saving shows.

const newtonBatch = 64

// newtonDims are the sizes of x benchmarked: 8, coupled by A and solved
// for at each step, and 1, where A is a 1×1 matrix and the solve a
// division, so that the runs' overhead weighs.
var newtonDims = []int{8, 1}

// newtonSolve is one example's solve: y (8, 1), A (8, 8) shared; the
// root x and the number of steps.
func newtonSolve(y, a *graph.Node) (x, steps *graph.Node) {
	g := y.Graph()
	n := y.Shape()[0]
	tol, one := g.Scalar(1e-20, graph.Float64), g.Scalar(1, graph.Float64)
	eye := ops.Eye(g, graph.Float64, n)
	residual := func(x *graph.Node) *graph.Node {
		return ops.Sub(ops.Add(ops.Add(ops.Mul(ops.Mul(x, x), x), x), ops.MatMul(a, x)), y)
	}
	final, steps := ops.While(func(c []*graph.Node) *graph.Node {
		f := residual(c[0])
		return ops.Greater(ops.Sum(ops.Mul(f, f)), tol)
	}, func(c []*graph.Node) []*graph.Node {
		x := c[0]
		d := ops.Add(ops.Scale(ops.Mul(x, x), 3), one)  // 3x² + 1, (8, 1)
		j := ops.Add(ops.Mul(eye, ops.Transpose(d)), a) // diag(3x² + 1) + A
		if n == 1 {
			return []*graph.Node{ops.Sub(x, ops.Div(residual(x), j))}
		}
		return []*graph.Node{ops.Sub(x, ops.Solve(j, residual(x)))}
	}, []*graph.Node{y}, ops.MaxSteps(30))
	return final[0], steps
}

// newtonData is the 64 right-hand sides (64, dim, 1), example b's of
// size up to 10^(b/16 − 2), and A, with entries under 0.1 so that the
// Jacobian is diagonally dominant.
func newtonData(dim int) (ys, a []float64) {
	ys = uniform(41, newtonBatch*dim, 1)
	for b := range newtonBatch {
		scale := math.Pow(10, float64(b)/16-2)
		for i := range dim {
			ys[b*dim+i] *= scale
		}
	}
	return ys, uniform(43, dim*dim, 0.1)
}

// newtonMachines compiles the batch's program and one example's; it
// returns their machines, the batch's feeds, each example's, and the
// nodes of the roots and steps of each.
func newtonMachines(tb testing.TB, newtonDim int) (batched, single *vm.Machine, feeds vm.Feeds, each []vm.Feeds, outs, one []*graph.Node) {
	tb.Helper()
	yv, av := newtonData(newtonDim)
	g := graph.New()
	ys := g.Input("ys", graph.Float64, newtonBatch, newtonDim, 1)
	a := g.Input("A", graph.Float64, newtonDim, newtonDim)
	outs, err := compile.Vmap(func(ex []*graph.Node) []*graph.Node {
		x, steps := newtonSolve(ex[0], ex[1])
		return []*graph.Node{x, steps}
	}, []*graph.Node{ys, a}, []int{0, compile.NotBatched}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	prog, err := compile.Compile(outs)
	if err != nil {
		tb.Fatal(err)
	}
	aVal := mustDense(graph.Float64, av, newtonDim, newtonDim)
	feeds = vm.Feeds{ys: mustDense(graph.Float64, yv, newtonBatch, newtonDim, 1), a: aVal}

	g1 := graph.New()
	y1 := g1.Input("y", graph.Float64, newtonDim, 1)
	a1 := g1.Input("A", graph.Float64, newtonDim, newtonDim)
	x1, s1 := newtonSolve(y1, a1)
	one = []*graph.Node{x1, s1}
	prog1, err := compile.Compile(one)
	if err != nil {
		tb.Fatal(err)
	}
	for b := range newtonBatch {
		each = append(each, vm.Feeds{y1: mustDense(graph.Float64, yv[b*newtonDim:(b+1)*newtonDim], newtonDim, 1), a1: aVal})
	}
	return newMachine(tb, prog, 1), newMachine(tb, prog1, 1), feeds, each, outs, one
}

// TestVmapWhileNewton checks, for each size, that the Vmapped solve
// equals the 64 separate solves, roots and numbers of steps, bit for bit (with
// nabla's own GEMM; OpenBLAS's gemv and gemm round apart, see
// exactProducts), and that the examples' numbers of steps differ.
func TestVmapWhileNewton(t *testing.T) {
	for _, dim := range newtonDims {
		t.Run(fmt.Sprint("dim", dim), func(t *testing.T) { checkVmapWhileNewton(t, dim) })
	}
}

func checkVmapWhileNewton(t *testing.T, newtonDim int) {
	tol := 0.0
	if !exactProducts {
		tol = 1e-14
	}
	batched, single, feeds, each, outs, one := newtonMachines(t, newtonDim)
	defer batched.Close()
	defer single.Close()
	if err := batched.Run(feeds); err != nil {
		t.Fatal(err)
	}
	xs, _ := batched.Value(outs[0])
	steps, _ := batched.Value(outs[1])
	gotX, gotSteps := graph.Float64s(xs), graph.Float64s(steps)
	seen := map[float64]bool{}
	for b, f := range each {
		if err := single.Run(f); err != nil {
			t.Fatal(err)
		}
		x, _ := single.Value(one[0])
		s, _ := single.Value(one[1])
		assertClose(t, fmt.Sprintf("root %d (tolerance %g)", b, tol), gotX[b*newtonDim:(b+1)*newtonDim], graph.Float64s(x), tol)
		if want := graph.Float64s(s)[0]; gotSteps[b] != want {
			t.Errorf("example %d: %v steps, want %v", b, gotSteps[b], want)
		}
		seen[gotSteps[b]] = true
	}
	if len(seen) < 3 {
		t.Errorf("the examples take %v steps: the test wants several numbers", seen)
	}
}

// BenchmarkVmapWhileNewton times 64 runs of one example's Newton solve
// against one run of its Vmap over the 64 examples (one thread), as the
// median of rounds' ratios, and each time's median in µs.
func BenchmarkVmapWhileNewton(b *testing.B) {
	for _, dim := range newtonDims {
		b.Run(fmt.Sprint("dim", dim), func(b *testing.B) { benchVmapWhileNewton(b, dim) })
	}
}

func benchVmapWhileNewton(b *testing.B, dim int) {
	batched, single, feeds, each, _, _ := newtonMachines(b, dim)
	defer batched.Close()
	defer single.Close()
	timeSeparateAndVmap(b, single, each, batched, feeds)
}
