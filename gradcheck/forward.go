package gradcheck

import (
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
)

// checkForwardRule compares an op's forward rule with its Backward, which
// the derivative checks have just compared with finite differences: for
// each checked input, the Jacobian–vector product along a random tangent
// (the rule unbatched) and the forward-mode Jacobian (the rule given every
// unit tangent at once, batched) must equal the reverse-mode Jacobian and
// its product with the tangent.
func checkForwardRule(apply func([]*graph.Node) []*graph.Node, vals []*tensor.Dense, checked []int, opts Options) *Error {
	rng := rand.New(rand.NewPCG(opts.Seed, 17))
	tangents := make([][]float64, len(checked))
	var yShape []int
	build := func(xs []*graph.Node) ([]*graph.Node, *Error) {
		y := apply(xs)[0]
		yShape = y.Shape()
		var outs []*graph.Node
		for k, i := range checked {
			x := xs[i]
			tangents[k] = make([]float64, x.Type().Size())
			for j := range tangents[k] {
				tangents[k][j] = 2*rng.Float64() - 1
			}
			t, err := graph.FromFloat64s(graph.Float64, tangents[k], x.Shape()...)
			if err != nil {
				return nil, fail(Misuse, err, "input %d: building a tangent", i)
			}
			jvp, err := compile.JVP([]*graph.Node{y}, []*graph.Node{x}, []*graph.Node{x.Graph().Const(t)})
			if err != nil {
				return nil, &Error{Problem: ForwardRule, Input: i, Output: 0, Err: err, Detail: "building the Jacobian–vector product failed"}
			}
			fwd, err := compile.JacobianWith(y, x, compile.Forward)
			if err != nil {
				return nil, &Error{Problem: ForwardRule, Input: i, Output: 0, Err: err, Detail: "building the forward-mode Jacobian failed"}
			}
			rev, err := compile.JacobianWith(y, x, compile.Reverse)
			if err != nil {
				return nil, &Error{Problem: BuildFailed, Input: i, Output: 0, Err: err, Detail: "building the reverse-mode Jacobian failed"}
			}
			outs = append(outs, jvp[0], fwd, rev)
		}
		return outs, nil
	}
	in, e := instantiate(build, vals, checked)
	if e != nil {
		return e
	}
	got := in.outputBuffers()
	if err := in.eval(got); err != nil {
		return fail(ForwardFailed, err, "running the forward-mode derivatives failed")
	}
	for k, i := range checked {
		jvp, fwd, rev := got[3*k], got[3*k+1], got[3*k+2]
		n := len(tangents[k])
		for r := range jvp {
			want := 0.0
			for j, t := range tangents[k] {
				want += rev[r*n+j] * t
			}
			if math.Abs(jvp[r]-want) > opts.Atol+opts.Rtol*math.Abs(want) {
				return &Error{Problem: ForwardRule, Input: i, Output: 0,
					Detail:  "the forward rule's Jacobian–vector product differs from the Backward's Jacobian times the tangent",
					Entries: []Entry{{Output: unravel(r, yShape), Analytic: jvp[r], Numeric: want}}}
			}
		}
		for e, want := range rev {
			if math.Abs(fwd[e]-want) > opts.Atol+opts.Rtol*math.Abs(want) {
				return &Error{Problem: ForwardRule, Input: i, Output: 0,
					Detail:  "the forward rule with batched tangents (the forward-mode Jacobian) differs from the Backward's Jacobian",
					Entries: []Entry{{Output: unravel(e/n, yShape), Input: unravel(e%n, vals[i].Shape()), Analytic: fwd[e], Numeric: want}}}
			}
		}
	}
	return nil
}
