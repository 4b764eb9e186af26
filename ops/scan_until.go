package ops

import (
	"fmt"
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// gatedScan is the loop of While and of Scan with Until: a Scan of the
// steps cfg gives whose step is Cond(gate(carry), run, stay) on the
// carries and the step's slices of xs, the branches returning the new
// carries, then the step outputs. gate must be zero at the steps that keep
// the carry, stay must read no slice, and gate must stay zero once it is:
// every later step then computes what that step did, so the loop stops at
// the first (untilKept) and the loops of its derivatives skip them. It
// returns the final carries, the stacked step outputs and the number of
// steps taken, T less the number of those steps (an int64 scalar).
func gatedScan(gate func(carry []*graph.Node) *graph.Node, run, stay CondBranch, init, xs []*graph.Node, cfg scanConfig) (final, ys []*graph.Node, steps *graph.Node) {
	C := len(init)
	cfg.until, cfg.stop = true, false
	final, out := Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		pred := gate(c)
		res := buildCond(pred, run, stay, slices.Concat(c, x), true)
		if len(res) < C {
			return res, nil // a failed Cond: its error is the body's
		}
		return res[:C], append(slices.Clone(res[C:]), pred)
	}, init, xs, func(c *scanConfig) { *c = cfg })
	flags := out[len(out)-1]
	if flags.Err() != nil {
		return final, out, flags
	}
	g := flags.Graph()
	T := float64(flags.Shape()[0])
	kept := Sum(Equal(Cast(flags, graph.Float64), g.Scalar(0, graph.Float64)))
	return final, out[:len(out)-1], Cast(Sub(g.Scalar(T, graph.Float64), kept), graph.Int64)
}

// scanUntil is Scan with Until: body's last step output is the predicate
// ending the loop. The loop carries beside the body's carries a flag, one
// while the loop runs: the step runs the body while it is one, else keeps
// the carries and outputs zeros; the flag turns zero after the step where
// the predicate holds.
func scanUntil(g *graph.Graph, body ScanBody, init, xs []*graph.Node, cfg scanConfig) (final, ys []*graph.Node, err error) {
	cfg.stop = false
	op, _, err := (&scanTracer{graph: g, body: body, cfg: cfg}).trace(typesOf(init), typesOf(xs))
	if err != nil {
		return nil, nil, err
	}
	C := len(init)
	Y := len(op.body.Outputs) - 2*C
	if Y == 0 {
		return nil, nil, fmt.Errorf("with Until, the body's last step output is the predicate, but the body returns no step output")
	}
	if p := op.body.Outputs[C+Y-1]; p.Type().Size() != 1 {
		return nil, nil, fmt.Errorf("the predicate (the body's last step output) has type %v: it must hold one value", p.Type())
	}
	var yTypes []graph.Type // the step outputs', set where the run branch is traced (before stay)
	run := func(o []*graph.Node) []*graph.Node {
		newCarry, y := body(o[:C], o[C+1:])
		p := y[len(y)-1]
		yTypes = typesOf(y[:len(y)-1])
		running := Cast(Equal(p, p.Graph().Scalar(0, p.DType())), graph.Int32)
		return slices.Concat(newCarry, []*graph.Node{running}, y[:len(y)-1])
	}
	stay := func(o []*graph.Node) []*graph.Node {
		out := slices.Clone(o[:C+1])
		for _, t := range yTypes {
			out = append(out, o[C].Graph().Const(graph.NewDenseOf(t)))
		}
		return out
	}
	gate := func(c []*graph.Node) *graph.Node { return c[C] }
	// An int32, which a batched loop broadcasts and selects exactly.
	carries := append(slices.Clone(init), g.Scalar(1, graph.Int32))
	final, ys, steps := gatedScan(gate, run, stay, carries, xs, cfg)
	if steps.Err() != nil {
		return repeat(steps, C), []*graph.Node{steps}, nil // recorded on the graph
	}
	return final[:C], append(ys, steps), nil
}
