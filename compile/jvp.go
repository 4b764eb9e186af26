package compile

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// JVP returns Jacobian–vector products (forward-mode derivatives): for
// each node y of ys, the derivative of y in the direction tangents, that
// is Σ_j ∂y/∂xs[j] · tangents[j], a node of y's type. tangents[j] has
// xs[j]'s type. The products are ordinary nodes appended to the graph:
// compile them, or differentiate them again, in either mode.
//
// JVP derives forward mode from the ops' symbolic gradients, so every op
// with a Backward (users' custom ops included) has one: a vector–Jacobian
// product is linear in its seed u, so J·t is the gradient with respect to
// u of ⟨Jᵀu, t⟩ (Theano's R-operator by double transposition). The seed
// is a zero constant the result does not read: compilation removes the
// vector–Jacobian product itself, leaving a forward sweep. An output that
// does not depend on xs gets zeros.
func JVP(ys, xs, tangents []*graph.Node) ([]*graph.Node, error) {
	site := graph.CallerSite()
	fail := func(format string, args ...any) error {
		return &graph.Error{Op: "JVP", Err: fmt.Errorf(format, args...), Site: site}
	}
	if len(ys) == 0 {
		return nil, fail("no outputs")
	}
	if len(xs) != len(tangents) {
		return nil, fail("%d tangents for %d inputs", len(tangents), len(xs))
	}
	if _, err := checkGradRequest(ys, nil, append(append([]*graph.Node(nil), xs...), tangents...), fail); err != nil {
		return nil, err
	}
	if err := checkGradDTypes(ys, xs, fail); err != nil {
		return nil, err
	}
	for j, x := range xs {
		if !tangents[j].Type().Equal(x.Type()) {
			return nil, fail("tangent %d has type %v, want %v's", j, tangents[j].Type(), x)
		}
	}
	g := ys[0].Graph()
	seeds := make([]*graph.Node, len(ys))
	for i, y := range ys {
		seeds[i] = g.Const(graph.NewDenseOf(y.Type()))
	}
	vjps, err := grad("JVP", ys, seeds, xs, []GradOption{ZerosIfDisconnected()})
	if err != nil {
		return nil, err
	}
	var dot *graph.Node // ⟨Jᵀu, t⟩
	for j, v := range vjps {
		term := ops.Sum(ops.Mul(v, tangents[j]))
		if dot == nil {
			dot = term
		} else {
			dot = ops.Add(dot, term)
		}
	}
	return grad("JVP", []*graph.Node{dot}, nil, seeds, []GradOption{ZerosIfDisconnected()})
}
