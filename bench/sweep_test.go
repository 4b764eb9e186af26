package bench

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/cputime"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// The shape sweep: every elementwise and reduction op over the layouts
// its operand can come in, at sizes from 16 to about 10⁶ elements, each
// compiled and run as a one-op program (float64, one thread). A case's
// throughput (elements of the r×c operand a second) is compared with the
// same op's on a contiguous operand of the same size, timed in the same
// rounds, so a burst of other work on a shared machine slows both, and
// timed in the CPU time of the thread that runs it (see sweepOpSize).
//
// The operand's layouts (r×c, r = c = √size):
//   - contiguous: an (r, c) tensor;
//   - inner-1: broadcast along an inner axis of extent 1. Elementwise ops
//     read an (r, 1) column against (r, c) (unary ones through
//     BroadcastTo); reductions reduce an (r, c, 1) tensor over its middle
//     axis, the layout whose rows are one element long;
//   - outer: broadcast along the outer axis, a (1, c) row against (r, c);
//     reductions reduce over the outer axis;
//   - transposed: the transpose of a (c, r) tensor;
//   - strided: every other element of an (r, c, 2) tensor (a Slice of its
//     last axis reshaped to (r, c)).
//
// Binary ops and Where take the layout in their first operand (Where: the
// selected a) and contiguous (r, c) others.

// sweepLayouts are the layouts, the contiguous one first.
var sweepLayouts = []string{"contiguous", "inner-1", "outer", "transposed", "strided"}

// sweepOp is one op of the sweep: an elementwise op (apply, given its
// operand x and a maker of more contiguous (r, c) operands), unary when
// it takes x alone, or a reduction along an axis.
type sweepOp struct {
	name   string
	unary  bool
	apply  func(x *graph.Node, more func() *graph.Node) *graph.Node
	reduce func(x *graph.Node, axis int) *graph.Node
}

func unarySweep(name string, f func(*graph.Node) *graph.Node) sweepOp {
	return sweepOp{name: name, unary: true, apply: func(x *graph.Node, _ func() *graph.Node) *graph.Node { return f(x) }}
}

func binarySweep(name string, f func(a, b *graph.Node) *graph.Node) sweepOp {
	return sweepOp{name: name, apply: func(x *graph.Node, more func() *graph.Node) *graph.Node { return f(x, more()) }}
}

func reduceSweep(name string, f func(x *graph.Node, axis int) *graph.Node) sweepOp {
	return sweepOp{name: name, reduce: f}
}

// sweepOps are every elementwise op (the unary ones, the binary ones and
// Where) and every reduction.
var sweepOps = []sweepOp{
	unarySweep("Neg", ops.Neg), unarySweep("Exp", ops.Exp), unarySweep("Log", ops.Log),
	unarySweep("Sqrt", ops.Sqrt), unarySweep("Square", ops.Square), unarySweep("Abs", ops.Abs),
	unarySweep("Sign", ops.Sign), unarySweep("Sin", ops.Sin), unarySweep("Cos", ops.Cos),
	unarySweep("Tanh", ops.Tanh), unarySweep("Sigmoid", ops.Sigmoid), unarySweep("ReLU", ops.ReLU),
	unarySweep("Softplus", ops.Softplus), unarySweep("Erf", ops.Erf), unarySweep("SiLU", ops.SiLU),
	binarySweep("Add", ops.Add), binarySweep("Sub", ops.Sub), binarySweep("Mul", ops.Mul),
	binarySweep("Div", ops.Div), binarySweep("Pow", ops.Pow), binarySweep("Maximum", ops.Maximum),
	binarySweep("Minimum", ops.Minimum), binarySweep("Greater", ops.Greater), binarySweep("Less", ops.Less),
	binarySweep("Equal", ops.Equal),
	{name: "Where", apply: func(x *graph.Node, more func() *graph.Node) *graph.Node {
		return ops.Where(ops.Greater(more(), more()), x, more())
	}},
	reduceSweep("Sum", func(x *graph.Node, axis int) *graph.Node { return ops.Sum(x, axis) }),
	reduceSweep("Mean", func(x *graph.Node, axis int) *graph.Node { return ops.Mean(x, axis) }),
	reduceSweep("Max", func(x *graph.Node, axis int) *graph.Node { return ops.Max(x, axis) }),
	reduceSweep("LogSumExp", func(x *graph.Node, axis int) *graph.Node { return ops.LogSumExp(x, axis) }),
	reduceSweep("SumTo", func(x *graph.Node, axis int) *graph.Node {
		s := slices.Clone(x.Shape())
		s[axis] = 1
		return ops.SumTo(x, s...)
	}),
}

// sweepProgram is one case compiled: its machine and feeds.
type sweepProgram struct {
	machine *vm.Machine
	feeds   vm.Feeds
}

// sweepCase compiles op over the layout at r×c elements.
func sweepCase(tb testing.TB, op sweepOp, layout string, r, c int) *sweepProgram {
	tb.Helper()
	g := graph.New()
	feeds := vm.Feeds{}
	seed := uint64(40)
	input := func(shape ...int) *graph.Node {
		n := g.Input(fmt.Sprintf("in%d", seed), graph.Float64, shape...)
		vals := uniform(seed, graph.ShapeSize(shape), 1)
		for i := range vals {
			vals[i] += 1.5 // positive, for Log, Sqrt and Pow
		}
		feeds[n] = mustDense(graph.Float64, vals, shape...)
		seed++
		return n
	}
	x, axis := sweepOperand(op, layout, r, c, input)
	var out *graph.Node
	switch {
	case op.reduce != nil:
		out = op.reduce(x, axis)
	case op.unary && (layout == "inner-1" || layout == "outer"):
		out = op.apply(ops.BroadcastTo(x, r, c), nil)
	default:
		out = op.apply(x, func() *graph.Node { return input(r, c) })
	}
	prog, err := compile.Compile([]*graph.Node{out})
	if err != nil {
		tb.Fatalf("%s %s %d×%d: %v", op.name, layout, r, c, err)
	}
	return &sweepProgram{machine: newMachine(tb, prog, 1), feeds: feeds}
}

// sweepOperand builds the operand in the layout with input, and the axis
// a reduction reduces.
func sweepOperand(op sweepOp, layout string, r, c int, input func(shape ...int) *graph.Node) (*graph.Node, int) {
	switch layout {
	case "inner-1":
		if op.reduce != nil {
			return input(r, c, 1), 1
		}
		return input(r, 1), 1
	case "outer":
		if op.reduce != nil {
			return input(r, c), 0
		}
		return input(1, c), 1
	case "transposed":
		return ops.Transpose(input(c, r), 1, 0), 1
	case "strided":
		return ops.Reshape(ops.Slice(input(r, c, 2), 2, 0, 1), r, c), 1
	}
	return input(r, c), 1
}

// run runs the case once.
func (p *sweepProgram) run(tb testing.TB) {
	if err := p.machine.Run(p.feeds); err != nil {
		tb.Fatal(err)
	}
}

// sweepSizes are the sweep's sizes, r×c with r = c: 16 to 1,048,576
// elements (4,096 and 65,536 alone with -short).
func sweepSizes() []int {
	if testing.Short() {
		return []int{64, 256}
	}
	return []int{4, 16, 64, 256, 1024}
}

// sweepResult is one case's throughput relative to the contiguous case's.
type sweepResult struct {
	op, layout string
	size       int
	ratio      float64 // median over rounds of contiguous time ÷ this time
	ns         float64 // median time of one run, ns
}

// sweepRounds is the rounds each op and size is timed in; roundTime the
// time each case runs a round.
func sweepRounds() (int, time.Duration) {
	if testing.Short() {
		return 3, time.Millisecond
	}
	return 5, 4 * time.Millisecond
}

// sweepOpSize times op's layouts at side×side elements in rounds, each
// case running about roundTime a round, and returns their ratios to the
// contiguous case. Each case's time is the CPU time of the thread that
// runs it (one thread, locked to the goroutine) where the system gives
// it, else wall-clock time: on a shared machine, wall-clock time counts
// the time the case waited for a core, which a burst of other builds
// makes several times longer for one case and not for the next.
func sweepOpSize(tb testing.TB, op sweepOp, side int) []sweepResult {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	progs := make([]*sweepProgram, len(sweepLayouts))
	for i, l := range sweepLayouts {
		progs[i] = sweepCase(tb, op, l, side, side)
		defer progs[i].machine.Close()
		progs[i].run(tb) // warm up
	}
	rounds, roundTime := sweepRounds()
	reps := make([]int, len(progs))
	for i, p := range progs { // calibrate: runs for about roundTime
		start, n := sweepClock(), 0
		for sweepClock()-start < roundTime/4 {
			p.run(tb)
			n++
		}
		reps[i] = max(1, 4*n)
	}
	times := make([][]float64, len(progs))
	ratios := make([][]float64, len(progs))
	for range rounds {
		per := make([]float64, len(progs))
		for i, p := range progs {
			start := sweepClock()
			for range reps[i] {
				p.run(tb)
			}
			per[i] = float64((sweepClock() - start).Nanoseconds()) / float64(reps[i])
			times[i] = append(times[i], per[i])
		}
		for i := range progs {
			ratios[i] = append(ratios[i], per[0]/per[i])
		}
	}
	res := make([]sweepResult, len(progs))
	for i, l := range sweepLayouts {
		res[i] = sweepResult{op: op.name, layout: l, size: side * side, ratio: median(ratios[i]), ns: median(times[i])}
	}
	return res
}

// sweepStart is the origin of sweepClock's wall-clock readings.
var sweepStart = time.Now()

// sweepClock is the calling thread's CPU time where the system measures
// it, else the wall-clock time since sweepStart.
func sweepClock() time.Duration {
	if t, ok := cputime.Thread(); ok {
		return t
	}
	return time.Since(sweepStart)
}

// sweepFloor is the least throughput a layout may have, relative to the
// contiguous case.
const sweepFloor = 0.25

// BenchmarkShapeSweep runs the shape sweep, one sub-benchmark per op
// (each reports its least ratio to the contiguous case), and prints its
// table: for each op and layout, the least ratio over the sizes (and the
// size where it is least), the cases below sweepFloor listed after it.
// With -short it runs two sizes and shorter rounds. Run it once:
//
//	go test ./bench -run '^$' -bench ShapeSweep -benchtime 1x
func BenchmarkShapeSweep(b *testing.B) {
	var all []sweepResult
	for _, op := range sweepOps {
		b.Run(op.name, func(b *testing.B) {
			var results []sweepResult
			for b.Loop() {
				results = results[:0]
				for _, side := range sweepSizes() {
					results = append(results, sweepOpSize(b, op, side)...)
				}
			}
			least := math.Inf(1)
			for _, r := range results {
				least = min(least, r.ratio)
			}
			b.ReportMetric(least, "least-ratio")
			all = append(all, results...)
		})
	}
	if len(all) > 0 {
		writeSweepTable(os.Stdout, all)
	}
}

// writeSweepTable writes the sweep's table in Markdown, then the least
// ratio and the cases below sweepFloor.
func writeSweepTable(w io.Writer, results []sweepResult) {
	type key struct{ op, layout string }
	worst := map[key]sweepResult{}
	var order []string
	least, misses := math.Inf(1), 0
	var missed []sweepResult
	for _, r := range results {
		k := key{r.op, r.layout}
		if _, ok := worst[k]; !ok && r.layout == sweepLayouts[0] {
			order = append(order, r.op)
		}
		if cur, ok := worst[k]; !ok || r.ratio < cur.ratio {
			worst[k] = r
		}
		if r.layout != sweepLayouts[0] {
			least = min(least, r.ratio)
			if r.ratio < sweepFloor {
				misses++
				missed = append(missed, r)
			}
		}
	}
	fmt.Fprintf(w, "\n| op | contiguous ns (largest size) |")
	for _, l := range sweepLayouts[1:] {
		fmt.Fprintf(w, " %s |", l)
	}
	fmt.Fprintf(w, "\n|---|---|")
	for range sweepLayouts[1:] {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintln(w)
	for _, op := range order {
		var big sweepResult
		for _, r := range results {
			if r.op == op && r.layout == sweepLayouts[0] && r.size >= big.size {
				big = r
			}
		}
		fmt.Fprintf(w, "| %s | %.4g (%d) |", op, big.ns, big.size)
		for _, l := range sweepLayouts[1:] {
			r := worst[key{op, l}]
			fmt.Fprintf(w, " %.2f (%d) |", r.ratio, r.size)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nleast ratio %.3f; %d cases below %.2f", least, misses, sweepFloor)
	for _, r := range missed {
		fmt.Fprintf(w, "; %s %s %d: %.3f", r.op, r.layout, r.size, r.ratio)
	}
	fmt.Fprintln(w)
}
