package ops_test

import (
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// untilBody is h ← tanh(h·w + b + x_t), k ← k + 1, outputting h·x_t at
// each step and stopping after the step where k exceeds limit.
func (l whileLoop) untilBody(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
	next := l.body([]*graph.Node{ops.Add(c[0], x[0]), c[1]})
	return next, []*graph.Node{ops.Mul(next[0], x[0]), ops.Greater(next[1], l.limit)}
}

// Scan with Until: its values, the number of steps and derivatives of the
// final carry and the stacked outputs, to third order and in forward
// mode, are those of the loop unrolled to the steps taken, the outputs
// padded with zeros: stopping at step 0, early, and never.
func TestScanUntilMatchesUnrolled(t *testing.T) {
	seq := []float64{0.1, -0.2, 0.3, 0.05, -0.15, 0.25, -0.3, 0.2, 0.1, -0.1}
	for _, c := range []struct {
		name  string
		limit float64
		steps int
	}{{"stopping at step 0", 0.5, 1}, {"stopping early", 2.5, 3}, {"never stopping", 100, 5}} {
		t.Run(c.name, func(t *testing.T) {
			l := newWhileLoop(t)
			xs := l.g.Const(f64(t, seq, 5, 2))
			final, ys := ops.Scan(l.untilBody, []*graph.Node{l.h0, l.k}, []*graph.Node{xs}, ops.Until())
			if len(ys) != 2 {
				t.Fatalf("%d outputs, want the stacked product and the steps", len(ys))
			}
			// One value from both the final carry and the padded outputs.
			y := ops.Add(final[0], ops.Sum(ops.Mul(ys[0], xs), 0))
			outs := append([]*graph.Node{ops.Cast(ys[1], graph.Float64), ys[0]}, l.derivatives(t, y)...)
			got := run(t, outs, vm.Feeds{l.limit: f64(t, []float64{c.limit})})
			if got[0][0] != float64(c.steps) {
				t.Fatalf("%v steps, want %d", got[0][0], c.steps)
			}
			for i, v := range got[1][2*c.steps:] {
				if v != 0 {
					t.Fatalf("padding %d is %v, want 0", i, v)
				}
			}

			u := newWhileLoop(t)
			uxs := u.g.Const(f64(t, seq, 5, 2))
			carry := []*graph.Node{u.h0, u.k}
			var stacked []*graph.Node
			for s := range c.steps {
				x := []*graph.Node{ops.Reshape(ops.Slice(uxs, 0, s, s+1), 2)}
				var y []*graph.Node
				carry, y = u.untilBody(carry, x)
				stacked = append(stacked, ops.Reshape(y[0], 1, 2))
			}
			if c.steps < 5 {
				stacked = append(stacked, u.g.Const(graph.NewDense(graph.Float64, 5-c.steps, 2)))
			}
			uys := ops.Concat(0, stacked...)
			uy := ops.Add(carry[0], ops.Sum(ops.Mul(uys, uxs), 0))
			want := run(t, append([]*graph.Node{uys}, u.derivatives(t, uy)...), vm.Feeds{u.limit: f64(t, []float64{c.limit})})
			names := []string{"outputs", "loss", "d/dw", "d/dh0", "second d/dw", "second d/db", "third d/dw", "tangent of the loss", "tangent of d/dw"}
			for i := range want {
				for j := range want[i] {
					if math.Abs(got[i+1][j]-want[i][j]) > 1e-13*math.Max(1, math.Abs(want[i][j])) {
						t.Fatalf("%s: Scan with Until gives %v, unrolled %v", names[i], got[i+1], want[i])
					}
				}
			}
		})
	}
}

// The loop stops after the step where the predicate holds: the body runs
// once per step taken, not once per slice.
func TestScanUntilStops(t *testing.T) {
	var runs atomic.Int64
	g := graph.New()
	limit := g.Input("limit", graph.Float64)
	xs := g.Const(f64(t, []float64{1, 2, 3, 4, 5, 6, 7, 8}, 8))
	final, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		s := ops.Add(c[0], graph.Apply(countOp{runs: &runs}, x[0]))
		return []*graph.Node{s}, []*graph.Node{s, ops.Greater(s, limit)}
	}, []*graph.Node{g.Scalar(0, graph.Float64)}, []*graph.Node{xs}, ops.Until())
	for _, c := range []struct {
		limit float64
		steps int
		sum   float64
	}{{0, 1, 1}, {9.5, 4, 10}, {100, 8, 36}} {
		runs.Store(0)
		got := run(t, []*graph.Node{final[0], ops.Cast(ys[1], graph.Float64)}, vm.Feeds{limit: f64(t, []float64{c.limit})})
		if got[0][0] != c.sum || got[1][0] != float64(c.steps) || runs.Load() != int64(c.steps) {
			t.Errorf("limit %v: sum %v after %v steps, body run %d times; want %v after %d", c.limit, got[0][0], got[1][0], runs.Load(), c.sum, c.steps)
		}
	}
}

func TestScanUntilErrors(t *testing.T) {
	cases := []struct {
		name string
		body ops.ScanBody
		want string
	}{
		{"predicate of several values", func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			return c, []*graph.Node{x[0]}
		}, "the predicate (the body's last step output) has type float64(2): it must hold one value"},
		{"no predicate", func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			return c, nil
		}, "with Until, the body's last step output is the predicate, but the body returns no step output"},
		{"body panics", func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			panic("boom")
		}, "body: panicked: boom"},
		{"body changes the carry's type", func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			return []*graph.Node{ops.Concat(0, c[0], c[0])}, []*graph.Node{ops.Sum(x[0])}
		}, "body returns carry 0 of type float64(4), want init's float64(2)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			final, ys := ops.Scan(c.body, []*graph.Node{g.Input("h", graph.Float64, 2)},
				[]*graph.Node{g.Input("xs", graph.Float64, 3, 2)}, ops.Until())
			err := final[0].Err()
			if err == nil || ys[0].Err() == nil {
				t.Fatalf("no error")
			}
			if !strings.Contains(err.Error(), "nabla: Scan: "+c.want) || !strings.Contains(err.Error(), "scan_until_test.go:") {
				t.Fatalf("error %v, want one from Scan containing %q and the caller's file", err, c.want)
			}
		})
	}
}

// Appending to Scan's results leaves the loop's outputs as they were.
func TestScanResultsAreCopies(t *testing.T) {
	g := graph.New()
	xs := g.Input("xs", graph.Float64, 3)
	final, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		s := ops.Add(c[0], x[0])
		return []*graph.Node{s}, []*graph.Node{s, s}
	}, []*graph.Node{g.Scalar(0, graph.Float64)}, []*graph.Node{xs})
	want := slices.Clone(final[0].Outputs())
	other := g.Scalar(7, graph.Float64)
	_, _ = append(final, other), append(ys, other)
	if outs := final[0].Outputs(); !slices.Equal(outs, want) {
		t.Fatalf("the Scan's outputs are %v, want %v", outs, want)
	}
}
