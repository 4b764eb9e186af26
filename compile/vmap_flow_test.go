package compile_test

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/optable"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// stepCountOp is the identity, counting the runs of its kernel; its batching
// rule applies it to the batch at once, so that a batched loop's body
// runs it once per step for every example.
type stepCountOp struct{ runs *atomic.Int64 }

func (stepCountOp) Name() string                             { return "Count" }
func (stepCountOp) Type(in []graph.Type) (graph.Type, error) { return in[0], graph.CheckArity(in, 1) }
func (o stepCountOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	o.runs.Add(1)
	graph.CopyValues(out, in[0])
	return nil
}

// Backward passes the gradient on.
func (stepCountOp) Backward(_ *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{g}
}

// JVP passes the tangent on.
func (stepCountOp) JVP(c *graph.JVPContext) *graph.Node { return c.Tangent(0) }

// Batch applies the op to the batch.
func (o stepCountOp) Batch(c *graph.BatchContext) *graph.Node { return graph.Apply(o, c.Input(0)) }

// newtonMax bounds newton's loop.
const newtonMax = 10

// newton is one example's Newton iteration for √a from x0, each step
// scaled by c, for as long as (x² − a)² > 1e-8 and at most newtonMax
// steps: the final x and the number of steps. counter, when not nil,
// counts the runs of the step.
func newton(a, x0, c *graph.Node, counter *atomic.Int64) (x, steps *graph.Node) {
	tol := a.Graph().Scalar(1e-8, a.DType())
	final, steps := ops.While(func(cr []*graph.Node) *graph.Node {
		r := ops.Sub(ops.Mul(cr[0], cr[0]), a)
		return ops.Greater(ops.Mul(r, r), tol)
	}, func(cr []*graph.Node) []*graph.Node {
		x := cr[0]
		step := ops.Div(ops.Sub(ops.Mul(x, x), a), ops.Scale(x, 2))
		if counter != nil {
			step = graph.Apply(stepCountOp{counter}, step)
		}
		return []*graph.Node{ops.Sub(x, ops.Mul(c, step))}
	}, []*graph.Node{x0}, ops.MaxSteps(newtonMax))
	return final[0], steps
}

// The examples of newton's tests: one starting at its root (zero steps),
// one stopped by MaxSteps (√3 from 3000), the others converging in
// between.
var (
	newtonA  = []float64{4, 2, 9, 0.3, 3, 16, 0.5, 3}
	newtonX0 = []float64{2, 1, 1, 1, 3000, 4.5, 5, 1.5}
)

// separate runs f on each example in a program of its own, compiled once:
// inputs[i] is example b's batched input i when batched[i], else shared.
// It returns each output per example.
func separate(t *testing.T, f func(ex []*graph.Node) []*graph.Node, inputs []*tensor.Dense, batched []bool) [][]*tensor.Dense {
	t.Helper()
	g := graph.New()
	in := make([]*graph.Node, len(inputs))
	for i, x := range inputs {
		shape := x.Shape()
		if batched[i] {
			shape = shape[1:]
		}
		in[i] = g.Input(fmt.Sprint("x", i), x.Dtype(), shape...)
	}
	ys := f(in)
	prog, err := compile.Compile(ys)
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	B := inputs[slices.Index(batched, true)].Shape()[0]
	res := make([][]*tensor.Dense, B)
	for b := range B {
		feeds := vm.Feeds{}
		for i, x := range inputs {
			if batched[i] {
				x = rowOf(t, x, b)
			}
			feeds[in[i]] = x
		}
		if err := m.Run(feeds); err != nil {
			t.Fatal(err)
		}
		for _, y := range ys {
			v, err := m.Value(y)
			if err != nil {
				t.Fatal(err)
			}
			c, err := graph.CloneDense(v)
			if err != nil {
				t.Fatal(err)
			}
			res[b] = append(res[b], c)
		}
	}
	return res
}

// batchedRun builds f's outputs from inputs' nodes in a graph of their
// own (with build, which may Vmap and differentiate them) and runs them.
func batchedRun(t *testing.T, build func(in []*graph.Node) []*graph.Node, inputs []*tensor.Dense) []*tensor.Dense {
	t.Helper()
	g := graph.New()
	in := make([]*graph.Node, len(inputs))
	feeds := vm.Feeds{}
	for i, x := range inputs {
		in[i] = g.Input(fmt.Sprint("x", i), x.Dtype(), x.Shape()...)
		feeds[in[i]] = x
	}
	return runVmapped(t, build(in), feeds)
}

// checkRows checks that row b of each of got equals want[b]'s, bit for
// bit, or (tol > 0) to within tol·max(1, |want|).
func checkRows(t *testing.T, what string, got []*tensor.Dense, want [][]*tensor.Dense, tol float64) {
	t.Helper()
	for k, y := range got {
		for b := range want {
			r := rowOf(t, y, b)
			if tol == 0 && sameBitsDense(r, want[b][k]) || tol > 0 && closeDense(r, want[b][k], tol) {
				continue
			}
			t.Errorf("%s, output %d, example %d: got %v, want %v", what, k, b, graph.Float64s(r), graph.Float64s(want[b][k]))
		}
	}
}

func vmapOrPanic(f func([]*graph.Node) []*graph.Node, xs []*graph.Node, inAxes []int) []*graph.Node {
	ys, err := compile.Vmap(f, xs, inAxes, nil)
	if err != nil {
		panic(err)
	}
	return ys
}

// newtonInputs is a, x0 (B,) and c (a scalar) of dtype.
func newtonInputs(dt tensor.Dtype) []*tensor.Dense {
	a, _ := graph.FromFloat64s(dt, newtonA, len(newtonA))
	x0, _ := graph.FromFloat64s(dt, newtonX0, len(newtonX0))
	c, _ := graph.FromFloat64s(dt, []float64{1})
	return []*tensor.Dense{a, x0, c}
}

// A Vmapped While (Newton's iteration per example, examples taking from
// zero steps to MaxSteps) is one loop over the batch, whose body runs
// once per step for all the examples, not once per example's step; its
// final carries and step counts equal the examples' separate runs bit for
// bit, in float32 and float64.
func TestVmapWhileEqualsSeparateRuns(t *testing.T) {
	for _, dt := range []tensor.Dtype{graph.Float64, graph.Float32} {
		t.Run(dt.String(), func(t *testing.T) {
			var perExample, batch atomic.Int64
			f := func(counter *atomic.Int64) func(ex []*graph.Node) []*graph.Node {
				return func(ex []*graph.Node) []*graph.Node {
					x, steps := newton(ex[0], ex[1], ex[2], counter)
					return []*graph.Node{x, ops.Cast(steps, ex[0].DType())}
				}
			}
			inputs := newtonInputs(dt)
			want := separate(t, f(&perExample), inputs, []bool{true, true, false})
			var total, most float64
			var zero bool
			for _, w := range want {
				s := graph.Float64s(w[1])[0]
				total, most, zero = total+s, max(most, s), zero || s == 0
			}
			if !zero || most != newtonMax {
				t.Fatalf("the examples take from %v to %v steps: the test wants 0 and %d among them", zero, most, newtonMax)
			}
			stop := compile.LoopedOps()
			got := batchedRun(t, func(in []*graph.Node) []*graph.Node {
				return vmapOrPanic(f(&batch), in, []int{0, 0, compile.NotBatched})
			}, inputs)
			if looped := stop(); len(looped) > 0 {
				t.Errorf("looped %v over the batch", looped)
			}
			checkRows(t, "Vmap of While", got, want, 0)
			if n := perExample.Load(); n != int64(total) {
				t.Errorf("the separate runs ran the step %d times, want %v", n, total)
			}
			if n := batch.Load(); n != newtonMax {
				t.Errorf("the batched loop ran the step %d times, want %d (once per step of the longest example)", n, newtonMax)
			}
		})
	}
}

// newtonLoss is one example's loss, x², from newton's final x.
func newtonLoss(ex []*graph.Node) *graph.Node {
	x, _ := newton(ex[0], ex[1], ex[2], nil)
	return ops.Mul(x, x)
}

// grads is Grad that panics on an error (inside functions that Vmap or
// gradcheck call, which report it).
func grads(y *graph.Node, wrt ...*graph.Node) []*graph.Node {
	g, err := compile.Grad(y, wrt...)
	if err != nil {
		panic(err)
	}
	return g
}

// The derivatives of a Vmapped While equal the examples' separate runs':
// the gradient of the batch's loss (a shared input's summed over the
// examples), per-example gradients (Grad inside Vmap, whose loops skip
// each example's padding steps), forward-mode tangents either way, and
// second derivatives; and they match finite differences to second order.
func TestVmapWhileDerivatives(t *testing.T) {
	inputs := newtonInputs(graph.Float64)
	batched := []bool{true, true, false}
	axes := []int{0, 0, compile.NotBatched}
	exGrads := func(ex []*graph.Node) []*graph.Node { return grads(newtonLoss(ex), ex...) }
	want := separate(t, exGrads, inputs, batched)

	stop := compile.LoopedOps()
	got := batchedRun(t, func(in []*graph.Node) []*graph.Node {
		loss := vmapOrPanic(func(ex []*graph.Node) []*graph.Node { return []*graph.Node{newtonLoss(ex)} }, in, axes)[0]
		return grads(ops.Sum(loss), in...)
	}, inputs)
	checkRows(t, "gradient of the batch's loss", got[:2], want, 0)
	var sum float64
	for _, w := range want {
		sum += graph.Float64s(w[2])[0]
	}
	if c := graph.Float64s(got[2])[0]; math.Abs(c-sum) > 1e-12*math.Abs(sum) {
		t.Errorf("gradient of the shared input: got %v, want the examples' sum %v", c, sum)
	}

	got = batchedRun(t, func(in []*graph.Node) []*graph.Node { return vmapOrPanic(exGrads, in, axes) }, inputs)
	checkRows(t, "per-example gradients", got, want, 0)

	// Forward mode: the tangent along a, of the batch and per example.
	exTangent := func(ex []*graph.Node) []*graph.Node {
		ts, err := compile.JVP([]*graph.Node{newtonLoss(ex)}, ex[:1], []*graph.Node{ops.Div(ex[0], ex[0])})
		if err != nil {
			panic(err)
		}
		return ts
	}
	wantT := separate(t, exTangent, inputs, batched)
	got = batchedRun(t, func(in []*graph.Node) []*graph.Node {
		loss := vmapOrPanic(func(ex []*graph.Node) []*graph.Node { return []*graph.Node{newtonLoss(ex)} }, in, axes)[0]
		ts, err := compile.JVP([]*graph.Node{loss}, in[:1], []*graph.Node{ops.Div(in[0], in[0])})
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}, inputs)
	checkRows(t, "tangent of the batch", got, wantT, 0)
	got = batchedRun(t, func(in []*graph.Node) []*graph.Node { return vmapOrPanic(exTangent, in, axes) }, inputs)
	checkRows(t, "per-example tangents", got, wantT, 0)

	// Second order: ∂²L/∂a² and ∂²L/∂a∂x0 per example.
	exSecond := func(ex []*graph.Node) []*graph.Node {
		return grads(grads(newtonLoss(ex), ex[0])[0], ex[0], ex[1])
	}
	want2 := separate(t, exSecond, inputs, batched)
	got = batchedRun(t, func(in []*graph.Node) []*graph.Node { return vmapOrPanic(exSecond, in, axes) }, inputs)
	checkRows(t, "per-example second derivatives", got, want2, 0)
	got = batchedRun(t, func(in []*graph.Node) []*graph.Node {
		loss := vmapOrPanic(func(ex []*graph.Node) []*graph.Node { return []*graph.Node{newtonLoss(ex)} }, in, axes)[0]
		return grads(ops.Sum(grads(ops.Sum(loss), in[0])[0]), in[0], in[1])
	}, inputs)
	checkRows(t, "second derivatives of the batch's loss", got, want2, 0)
	if looped := stop(); len(looped) > 0 {
		t.Errorf("looped %v over the batch", looped)
	}

	f := func(in []*graph.Node) *graph.Node {
		return vmapOrPanic(func(ex []*graph.Node) []*graph.Node { return []*graph.Node{newtonLoss(ex)} }, in, axes)[0]
	}
	if err := gradcheck.GradGradCheck(f, inputs, gradcheck.Options{}); err != nil {
		t.Error(err)
	}
}

// logOrLinear is one example's Cond on x > 0: w·log(x), else w·x. The
// then branch computes NaN (x < 0) or −∞ (x = 0) for the examples that do
// not take it, with infinite or NaN partial derivatives there.
func logOrLinear(ex []*graph.Node) []*graph.Node {
	x, w := ex[0], ex[1]
	zero := ops.Sub(w, w)
	return ops.Cond(ops.Greater(x, zero), func(o []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Mul(ops.Log(o[0]), w)}
	}, func(o []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Mul(o[0], w)}
	}, []*graph.Node{x})
}

// A Vmapped Cond whose predicate is batched runs both branches once for
// the batch and selects each example's result: bit for bit its own run's,
// though the untaken branch computes NaN and −∞ for it. Its derivatives,
// reverse, forward and second order, with respect to the examples and to
// a shared value the branch reads, equal the separate runs' and are
// finite: the untaken branch's infinite partial derivatives, which the
// zero gradient it is routed would turn into NaN (0·∞), are left out.
func TestVmapCondUntakenBranch(t *testing.T) {
	for _, dt := range []tensor.Dtype{graph.Float64, graph.Float32} {
		t.Run(dt.String(), func(t *testing.T) {
			x, _ := graph.FromFloat64s(dt, []float64{2, -1, 0, 0.5, -3}, 5)
			w, _ := graph.FromFloat64s(dt, []float64{1.5})
			inputs := []*tensor.Dense{x, w}
			batched, axes := []bool{true, false}, []int{0, compile.NotBatched}
			stop := compile.LoopedOps()

			want := separate(t, logOrLinear, inputs, batched)
			got := batchedRun(t, func(in []*graph.Node) []*graph.Node { return vmapOrPanic(logOrLinear, in, axes) }, inputs)
			checkRows(t, "Vmap of Cond", got, want, 0)

			exDerivs := func(ex []*graph.Node) []*graph.Node {
				y := logOrLinear(ex)[0]
				g := grads(y, ex...)
				ts, err := compile.JVP([]*graph.Node{y}, ex[:1], []*graph.Node{ops.Div(ex[1], ex[1])})
				if err != nil {
					panic(err)
				}
				return append(g, ts[0], grads(g[0], ex[0])[0])
			}
			want = separate(t, exDerivs, inputs, batched)
			got = batchedRun(t, func(in []*graph.Node) []*graph.Node { return vmapOrPanic(exDerivs, in, axes) }, inputs)
			checkRows(t, "per-example derivatives", got, want, 0)

			got = batchedRun(t, func(in []*graph.Node) []*graph.Node {
				y := vmapOrPanic(logOrLinear, in, axes)[0]
				g := grads(ops.Sum(y), in...)
				ones := ops.Add(ops.Sub(in[0], in[0]), ops.Div(in[1], in[1]))
				ts, err := compile.JVP([]*graph.Node{y}, in[:1], []*graph.Node{ones})
				if err != nil {
					t.Fatal(err)
				}
				return []*graph.Node{g[0], ts[0], grads(ops.Sum(g[0]), in[0])[0], g[1]}
			}, inputs)
			var sum float64
			for b, w := range want {
				sum += graph.Float64s(w[1])[0]
				want[b] = []*tensor.Dense{w[0], w[2], w[3]}
			}
			checkRows(t, "derivatives of the batch", got[:3], want, 0)
			gw := graph.Float64s(got[3])[0]
			if math.IsNaN(gw) || math.Abs(gw-sum) > 1e-6*math.Abs(sum) {
				t.Errorf("gradient of the shared w: got %v, want the examples' sum %v", gw, sum)
			}
			if looped := stop(); len(looped) > 0 {
				t.Errorf("looped %v over the batch", looped)
			}
		})
	}
}

// Mistakes in a While or a Cond that f builds are errors from Vmap
// naming the mistake and the file:line of the While or Cond, as they are
// outside Vmap, and Vmap's own file:line.
func TestVmapFlowErrors(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3, 2)
	var line int // the line of the While or Cond each case builds
	here := func() int { _, _, l, _ := runtime.Caller(1); return l }
	loop := func(opts ...ops.WhileOption) func(ex []*graph.Node) []*graph.Node {
		return func(ex []*graph.Node) []*graph.Node {
			keep := func(c []*graph.Node) *graph.Node { return ops.Sum(c[0]) }
			line = here() + 1
			final, _ := ops.While(keep, func(c []*graph.Node) []*graph.Node { return c }, ex, opts...)
			return final
		}
	}
	cases := []struct {
		name string
		f    func(ex []*graph.Node) []*graph.Node
		want string
	}{
		{"MaxSteps missing", loop(), "While: MaxSteps is missing: bound the loop with MaxSteps(n)"},
		{"MaxSteps not positive", loop(ops.MaxSteps(0)), "While: MaxSteps(0) is not positive"},
		{"a body changing shapes", func(ex []*graph.Node) []*graph.Node {
			line = here() + 1
			final, _ := ops.While(func(c []*graph.Node) *graph.Node { return ops.Sum(c[0]) }, func(c []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Concat(0, c[0], c[0])}
			}, ex, ops.MaxSteps(3))
			return final
		}, "While: body returns carry 0 of type float64(4), want init's float64(2)"},
		{"branches of other types, the predicate batched", func(ex []*graph.Node) []*graph.Node {
			line = here() + 1
			return ops.Cond(ops.Sum(ex[0]), func(o []*graph.Node) []*graph.Node { return o }, func(o []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Sum(o[0])}
			}, ex)
		}, "Cond: the then branch returns output 0 of type float64(2), the else branch of type float64()"},
	}
	for _, c := range cases {
		_, err := compile.Vmap(c.f, []*graph.Node{x}, nil, nil)
		vmapLine := here() - 1
		for _, want := range []string{c.want, fmt.Sprintf("at vmap_flow_test.go:%d", line), "Vmap: "} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("case %s: got %v, want it to hold %q", c.name, err, want)
			}
		}
		if want := fmt.Sprintf("at vmap_flow_test.go:%d", vmapLine); err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("case %s: got %v, want it to end %q", c.name, err, want)
		}
	}
}

// A Vmapped Scan with Until, whose examples stop at step 0, early and
// never (their own bounds), is one loop over the batch: its values and
// per-example gradients equal the separate runs' bit for bit, and its
// derivatives match finite differences to second order.
func TestVmapUntil(t *testing.T) {
	row := optable.UntilTable()[0]
	limits, _ := graph.FromFloat64s(graph.Float64, []float64{0.5, 1.5, 2.5, 50}, 4)
	carries := stackScaled(row.Inputs[1], 4)
	inputs := []*tensor.Dense{limits, carries, row.Inputs[2], row.Inputs[3]}
	batched, axes := []bool{true, true, false, false}, []int{0, 0, compile.NotBatched, compile.NotBatched}
	f := func(ex []*graph.Node) []*graph.Node { return []*graph.Node{row.Build(ex)} }
	exGrads := func(ex []*graph.Node) []*graph.Node {
		y := row.Build(ex)
		return append([]*graph.Node{y}, grads(ops.Sum(ops.Square(y)), ex[1], ex[2])...)
	}
	stop := compile.LoopedOps()
	want := separate(t, exGrads, inputs, batched)
	got := batchedRun(t, func(in []*graph.Node) []*graph.Node { return vmapOrPanic(exGrads, in, axes) }, inputs)
	checkRows(t, "Vmap of Until and its per-example gradients", got, want, 0)
	if looped := stop(); len(looped) > 0 {
		t.Errorf("looped %v over the batch", looped)
	}
	fn := func(in []*graph.Node) *graph.Node { return vmapOrPanic(f, in, axes)[0] }
	if err := gradcheck.GradGradCheck(fn, inputs, gradcheck.Options{Inputs: []int{1, 2, 3}}); err != nil {
		t.Error(err)
	}
}

// stackScaled is n examples of x, example b scaled by 1 + b/10, stacked.
func stackScaled(x *tensor.Dense, n int) *tensor.Dense {
	var all []float64
	for b := range n {
		for _, v := range graph.Float64s(x) {
			all = append(all, v*(1+0.1*float64(b)))
		}
	}
	stacked, _ := graph.FromFloat64s(x.Dtype(), all, append([]int{n}, x.Shape()...)...)
	return stacked
}

// The Hessian of a Vmapped While's batch loss (forward over reverse, its
// tangents batched along the unit directions) is diagonal, its diagonal
// the examples' own Hessians bit for bit; and Vmap of Vmap of the While
// (examples of examples) equals the separate runs bit for bit.
func TestVmapWhileHessianAndNested(t *testing.T) {
	inputs := newtonInputs(graph.Float64)
	axes := []int{0, 0, compile.NotBatched}
	exHessian := func(ex []*graph.Node) []*graph.Node {
		h, err := compile.Hessian(newtonLoss(ex), ex[0])
		if err != nil {
			panic(err)
		}
		return []*graph.Node{h}
	}
	want := separate(t, exHessian, inputs, []bool{true, true, false})
	got := batchedRun(t, func(in []*graph.Node) []*graph.Node {
		loss := vmapOrPanic(func(ex []*graph.Node) []*graph.Node { return []*graph.Node{newtonLoss(ex)} }, in, axes)[0]
		h, err := compile.Hessian(ops.Sum(loss), in[0])
		if err != nil {
			t.Fatal(err)
		}
		return []*graph.Node{h}
	}, inputs)
	B := len(newtonA)
	h := graph.Float64s(got[0])
	for i := range B {
		for j := range B {
			w := 0.0
			if i == j {
				w = graph.Float64s(want[i][0])[0]
			}
			if h[i*B+j] != w {
				t.Errorf("Hessian (%d, %d): got %v, want %v", i, j, h[i*B+j], w)
			}
		}
	}

	// Two examples of four: a and x0 as (2, 4).
	a, _ := graph.FromFloat64s(graph.Float64, newtonA, 2, 4)
	x0, _ := graph.FromFloat64s(graph.Float64, newtonX0, 2, 4)
	nested := []*tensor.Dense{a, x0, inputs[2]}
	f := func(ex []*graph.Node) []*graph.Node {
		x, steps := newton(ex[0], ex[1], ex[2], nil)
		return []*graph.Node{x, ops.Cast(steps, graph.Float64)}
	}
	flat := separate(t, f, inputs, []bool{true, true, false})
	stop := compile.LoopedOps()
	got = batchedRun(t, func(in []*graph.Node) []*graph.Node {
		return vmapOrPanic(func(row []*graph.Node) []*graph.Node { return vmapOrPanic(f, row, axes) }, in, axes)
	}, nested)
	if looped := stop(); len(looped) > 0 {
		t.Errorf("looped %v over the batch", looped)
	}
	for k := range got {
		vals := graph.Float64s(got[k])
		for b := range B {
			if w := graph.Float64s(flat[b][k])[0]; math.Float64bits(vals[b]) != math.Float64bits(w) {
				t.Errorf("nested Vmap, output %d, example %d: got %v, want %v", k, b, vals[b], w)
			}
		}
	}
}

// A While whose initial carry every example shares, but whose cond reads
// a batched bound, batches its carry (each example stops at its own
// step), without a loop over the examples.
func TestVmapWhileSharedInit(t *testing.T) {
	limits, _ := graph.FromFloat64s(graph.Float64, []float64{-1, 0.5, 2.5, 7, 3}, 5)
	start, _ := graph.FromFloat64s(graph.Float64, []float64{0})
	inputs := []*tensor.Dense{limits, start}
	f := func(ex []*graph.Node) []*graph.Node {
		one := ops.Div(ex[0], ex[0])
		final, steps := ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(c[0], ex[0]) },
			func(c []*graph.Node) []*graph.Node { return []*graph.Node{ops.Add(c[0], one)} },
			[]*graph.Node{ex[1]}, ops.MaxSteps(5))
		return []*graph.Node{final[0], ops.Cast(steps, graph.Float64)}
	}
	want := separate(t, f, inputs, []bool{true, false})
	stop := compile.LoopedOps()
	got := batchedRun(t, func(in []*graph.Node) []*graph.Node {
		return vmapOrPanic(f, in, []int{0, compile.NotBatched})
	}, inputs)
	if looped := stop(); len(looped) > 0 {
		t.Errorf("looped %v over the batch", looped)
	}
	checkRows(t, "While from a shared carry", got, want, 0)
	if s := graph.Float64s(got[1]); !slices.Equal(s, []float64{0, 1, 3, 5, 3}) {
		t.Errorf("steps %v, want 0 1 3 5 3 (7 stopped by MaxSteps)", s)
	}
}
