package compile

import (
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// JVP returns Jacobian–vector products (forward-mode derivatives): for
// each node y of ys, the derivative of y in the direction tangents, that
// is Σ_j ∂y/∂xs[j] · tangents[j], a node of y's type. tangents[j] has
// xs[j]'s type. The products are ordinary nodes appended to the graph:
// compile them, or differentiate them again, in either mode.
//
// JVP pushes the tangents forward through each op's forward rule
// (graph.ForwardDifferentiable); an op without one (a user's custom op,
// say) gets forward mode from its symbolic gradient: a vector–Jacobian
// product is linear in its seed u, so the op's J·t is the gradient with
// respect to u of ⟨Jᵀu, t⟩ (Theano's R-operator by double transposition).
// So every op with a Backward has forward mode. An output that does not
// depend on xs gets zeros.
func JVP(ys, xs, tangents []*graph.Node) ([]*graph.Node, error) {
	return jvp("JVP", ys, xs, tangents)
}

// jvp is JVP called by caller, whose name its errors give.
func jvp(caller string, ys, xs, tangents []*graph.Node) ([]*graph.Node, error) {
	fail := failer(caller, graph.CallerSite())
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
	return forwardSweep(caller, ys, xs, tangents, 0)
}

// batchedJVP returns the JVPs of y along k tangents of x, given as one
// tensor of shape (k, x.shape...): a node of shape (k, y.shape...), from
// one forward sweep with batched tangents. k must be positive.
func batchedJVP(caller string, y, x *graph.Node, tangents *tensor.Dense, k int) (*graph.Node, error) {
	fail := failer(caller, graph.CallerSite())
	ys, xs := []*graph.Node{y}, []*graph.Node{x}
	if _, err := checkGradRequest(ys, nil, xs, fail); err != nil {
		return nil, err
	}
	if err := checkGradDTypes(ys, xs, fail); err != nil {
		return nil, err
	}
	out, err := forwardSweep(caller, ys, xs, []*graph.Node{x.Graph().Const(tangents)}, k)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}
