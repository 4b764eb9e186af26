package fuzztest

import (
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// FuzzCond checks the first and second derivatives of Conds whose
// branches are two random functions of smooth ops of the operands (a
// loop's carry and step slice) and a captured value, in a Scan whose
// steps take either branch as a predicate sequence drawn from the input
// says, against finite differences, and their forward mode against
// reverse mode.
func FuzzCond(f *testing.F) {
	for _, seed := range [][]byte{
		{3, 2, 0, 5, 1, 12, 0, 5, 1, 20, 2, 7, 0, 16},
		{2, 1, 1, 2, 0, 16, 1, 2, 2, 21, 0, 17, 1, 4},
		{4, 3, 1, 9, 2, 22, 0, 14, 1, 10, 2, 18, 0, 3},
		{1, 0, 0, 0, 3, 7, 1, 19, 0, 6},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := NewBytes(data)
		steps := in.IntN(5)
		shape := in.Shape(3, 2)
		mask := int64(in.Byte())
		preds := make([]int64, steps)
		for s := range preds {
			preds[s] = mask >> s & 1
		}
		rng := NewBuilder(NewBytes(data), Mode{}, graph.New()).Rand()
		seqShape := append([]int{steps}, shape...)
		inputs := []*tensor.Dense{
			Values(rng, graph.TypeOf(graph.Float64, shape...)),    // initial carry
			Values(rng, graph.TypeOf(graph.Float64, seqShape...)), // sequence
			Values(rng, graph.TypeOf(graph.Float64, shape...)),    // captured
		}
		rest := data[min(in.pos, len(data)):]
		half := len(rest) / 2
		predValues, err := graph.FromInt64s(graph.Int64, preds, steps)
		if err != nil {
			t.Fatal(err)
		}
		// branch builds a random function of the operands and the
		// captured value, brought to the carry's shape.
		branch := func(code []byte, captured *graph.Node) ops.CondBranch {
			return func(o []*graph.Node) []*graph.Node {
				b := NewBuilder(NewBytes(code), Mode{MaxOps: 4}, o[0].Graph(), o[0], o[1], captured)
				y := b.BuildSmooth()
				if slices.Equal(y.Shape(), o[0].Shape()) {
					return []*graph.Node{ops.Tanh(y)}
				}
				return []*graph.Node{ops.Tanh(ops.Add(o[0], ops.Scale(ops.Sum(y), 0.3)))}
			}
		}
		// scan is the loop; x[3], when given, the predicates (float64).
		scan := func(x []*graph.Node) *graph.Node {
			ps := x[0].Graph().Const(predValues)
			if len(x) > 3 {
				ps = x[3]
			}
			final, ys := ops.Scan(func(c, s []*graph.Node) ([]*graph.Node, []*graph.Node) {
				next := ops.Cond(s[0], branch(rest[:half], x[2]), branch(rest[half:], x[2]), []*graph.Node{c[0], s[1]})
				return next, []*graph.Node{ops.Mul(next[0], s[1])}
			}, []*graph.Node{x[0]}, []*graph.Node{ps, x[1]})
			return ops.Add(ops.Sum(final[0]), ops.Sum(ops.Sin(ys[0])))
		}
		fn := func(x []*graph.Node) *graph.Node { return scan(x[:3]) }
		// Vmapped over examples of their own carries and predicates,
		// which take either branch at a step across the examples.
		var examples [][]*tensor.Dense
		for b := range 3 {
			carry := graph.Float64s(inputs[0])
			for i := range carry {
				carry[i] *= 1 + 0.25*float64(b)
			}
			c, _ := graph.FromFloat64s(graph.Float64, carry, shape...)
			p := make([]float64, steps)
			for s := range p {
				p[s] = float64((mask >> s & 1) ^ int64(b&1))
			}
			ps, _ := graph.FromFloat64s(graph.Float64, p, steps)
			examples = append(examples, []*tensor.Dense{c, inputs[1], inputs[2], ps})
		}
		vmapAgrees(t, scan, examples, []bool{true, false, false, true})
		opts := gradcheck.Options{Seed: 1}
		if err := gradcheck.Check(fn, inputs, opts); err != nil {
			fail(t, "first derivatives", err)
		}
		if err := gradcheck.GradGradCheck(fn, inputs, opts); err != nil {
			fail(t, "second derivatives", err)
		}
		forwardAgrees(t, fn, inputs)
	})
}

// FuzzWhile checks, like FuzzCond, While loops whose body is a random
// function of smooth ops of the carry and a captured value, the number of
// steps (none to MaxSteps) set by a counter carried beside it.
func FuzzWhile(f *testing.F) {
	for _, seed := range [][]byte{
		{3, 2, 1, 5, 1, 12, 0, 5, 1, 20},
		{0, 1, 3, 2, 0, 16, 1, 2, 2, 21},
		{4, 3, 2, 9, 2, 22, 0, 14, 1, 10},
		{2, 0, 0, 0, 3, 7, 1, 19, 0, 6},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := NewBytes(data)
		limit := float64(in.IntN(5)) + 0.5
		maxSteps := 1 + in.IntN(4)
		shape := in.Shape(3, 2)
		rng := NewBuilder(NewBytes(data), Mode{}, graph.New()).Rand()
		inputs := []*tensor.Dense{
			Values(rng, graph.TypeOf(graph.Float64, shape...)), // initial carry
			Values(rng, graph.TypeOf(graph.Float64, shape...)), // captured
		}
		rest := data[min(in.pos, len(data)):]
		// loop is the While; x[2], when given, the bound.
		loop := func(x []*graph.Node) *graph.Node {
			g := x[0].Graph()
			bound := g.Scalar(limit, graph.Float64)
			if len(x) > 2 {
				bound = x[2]
			}
			final, _ := ops.While(func(c []*graph.Node) *graph.Node {
				return ops.Less(c[1], bound)
			}, func(c []*graph.Node) []*graph.Node {
				b := NewBuilder(NewBytes(rest), Mode{MaxOps: 4}, c[0].Graph(), c[0], x[1])
				y := b.BuildSmooth()
				next := ops.Tanh(ops.Add(c[0], ops.Scale(ops.Sum(y), 0.3)))
				if slices.Equal(y.Shape(), c[0].Shape()) {
					next = ops.Tanh(y)
				}
				return []*graph.Node{next, ops.Add(c[1], g.Scalar(1, graph.Float64))}
			}, []*graph.Node{x[0], g.Scalar(0, graph.Float64)}, ops.MaxSteps(maxSteps))
			return ops.Sum(ops.Sin(final[0]))
		}
		fn := func(x []*graph.Node) *graph.Node { return loop(x[:2]) }
		// Vmapped over examples of their own carries and bounds, which
		// stop them at different steps (none for the bound -0.5).
		var examples [][]*tensor.Dense
		for b := range 3 {
			carry := graph.Float64s(inputs[0])
			for i := range carry {
				carry[i] *= 1 + 0.25*float64(b)
			}
			c, _ := graph.FromFloat64s(graph.Float64, carry, shape...)
			l, _ := graph.FromFloat64s(graph.Float64, []float64{limit + float64(b) - 1})
			examples = append(examples, []*tensor.Dense{c, inputs[1], l})
		}
		vmapAgrees(t, loop, examples, []bool{true, false, true})
		opts := gradcheck.Options{Seed: 1}
		if err := gradcheck.Check(fn, inputs, opts); err != nil {
			fail(t, "first derivatives", err)
		}
		if err := gradcheck.GradGradCheck(fn, inputs, opts); err != nil {
			fail(t, "second derivatives", err)
		}
		forwardAgrees(t, fn, inputs)
	})
}
