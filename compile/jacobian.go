package compile

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// JacobianMode chooses how Jacobian builds its entries.
type JacobianMode int

// The modes of JacobianWith.
const (
	// Auto builds a column per element of x (forward mode) when x has
	// fewer elements than y, and a row per element of y (reverse mode)
	// otherwise.
	Auto JacobianMode = iota
	// Forward builds one Jacobian–vector product per element of x.
	Forward
	// Reverse builds one vector–Jacobian product per element of y.
	Reverse
)

// Jacobian returns the Jacobian of y with respect to x, a node of shape
// y.shape ++ x.shape: entry (i..., j...) is ∂y[i...]/∂x[j...]. It builds
// its columns in forward mode when x has fewer elements than y, its rows
// in reverse mode otherwise (see JacobianWith).
func Jacobian(y, x *graph.Node) (*graph.Node, error) { return JacobianWith(y, x, Auto) }

// JacobianWith is Jacobian in the given mode: forward (the JVPs of all
// of x's unit vectors, carried through the graph at once as a batch of
// tangents), reverse (one VJP per element of y) or chosen by the sizes. The
// entries are the same either way, to rounding. The Jacobian, and the n
// unit tangents of forward mode or the m seeds of reverse mode, must each
// fit graph.MemoryLimit: a bigger one is an error, before anything is
// allocated.
func JacobianWith(y, x *graph.Node, mode JacobianMode) (*graph.Node, error) {
	fail := failer("Jacobian", graph.CallerSite())
	if err := checkDerivative(fail, y, x); err != nil {
		return nil, err
	}
	g := y.Graph()
	m, n := y.Type().Size(), x.Type().Size()
	if mode == Auto {
		mode = Reverse
		if n < m {
			mode = Forward
		}
	}
	shape := joinShapes(y.Shape(), x.Shape())
	what := fmt.Sprintf("the Jacobian of %v with respect to %v", y, x)
	if err := checkRank(fail, what, shape); err != nil {
		return nil, err
	}
	if err := checkBytes(fail, what, y.DType(), shape, insteadOfJacobian); err != nil {
		return nil, err
	}
	var parts []*graph.Node // rows (reverse) or columns (forward), flattened
	switch mode {
	case Reverse:
		// m seeds of y's type: as many bytes as an (m, y.shape...) tensor.
		if err := checkBytes(fail, what+" in reverse mode, one seed per element of y", y.DType(),
			joinShapes([]int{m}, y.Shape()), insteadOfJacobian); err != nil {
			return nil, err
		}
		for i := range m {
			seed := graph.NewDenseOf(y.Type())
			graph.SetFloat(seed, i, 1)
			gi, err := grad("Jacobian", []*graph.Node{y}, []*graph.Node{g.Const(seed)}, []*graph.Node{x}, []GradOption{ZerosIfDisconnected()})
			if err != nil {
				return nil, err
			}
			parts = append(parts, ops.Reshape(gi[0], 1, n))
		}
	case Forward:
		if m == 0 || n == 0 {
			break
		}
		// One sweep carries all n unit tangents along a leading axis:
		// its result's row j is column j of the Jacobian.
		if err := checkBytes(fail, what+" in forward mode, one unit tangent per element of x", x.DType(),
			joinShapes([]int{n}, x.Shape()), insteadOfJacobian); err != nil {
			return nil, err
		}
		cols, err := batchedJVP("Jacobian", y, x, unitTangents(x), n)
		if err != nil {
			return nil, err
		}
		parts = append(parts, ops.Transpose(ops.Reshape(cols, n, m)))
	default:
		return nil, fail("unknown mode %d", mode)
	}
	var j *graph.Node
	if len(parts) == 0 { // an empty x or y
		j = g.Const(graph.NewDense(y.DType(), shape...))
	} else if len(parts) == 1 {
		j = ops.Reshape(parts[0], shape...)
	} else {
		j = ops.Reshape(ops.Concat(0, parts...), shape...)
	}
	return j, g.Err()
}

// Hessian returns the Hessian of the scalar f with respect to x, a node of
// shape x.shape ++ x.shape: the Jacobian of the gradient, built in forward
// mode (forward over reverse: every Hessian–vector product with a unit
// vector, computed together as batched tensor operations). Entry (i, j)
// is ∂/∂x_i ∂f/∂x_j. A Hessian (and so its unit tangents) bigger than
// graph.MemoryLimit is an error, before anything is allocated: HVP
// never forms it.
func Hessian(f, x *graph.Node) (*graph.Node, error) {
	fail := failer("Hessian", graph.CallerSite())
	if err := checkHessian(fail, "Hessian", f, x); err != nil {
		return nil, err
	}
	// The unit tangents have as many elements as the Hessian.
	shape := joinShapes(x.Shape(), x.Shape())
	what := fmt.Sprintf("the Hessian of %v with respect to %v", f, x)
	if err := checkRank(fail, what, shape); err != nil {
		return nil, err
	}
	if err := checkBytes(fail, what, x.DType(), shape, insteadOfHessian); err != nil {
		return nil, err
	}
	gr, err := grad("Hessian", []*graph.Node{f}, nil, []*graph.Node{x}, nil)
	if err != nil {
		return nil, err
	}
	n := x.Type().Size()
	if n == 0 {
		return x.Graph().Const(graph.NewDense(x.DType(), shape...)), x.Graph().Err()
	}
	// Row i of the batched sweep is the gradient's derivative along unit
	// vector i: ∂/∂x_i ∂f/∂x_j, entry (i, j) of the Hessian as it is
	// defined, so no transpose is needed.
	rows, err := batchedJVP("Hessian", gr[0], x, unitTangents(x), n)
	if err != nil {
		return nil, err
	}
	return ops.Reshape(rows, shape...), x.Graph().Err()
}

// unitTangents is every unit vector of x's type, stacked: an identity
// matrix of shape (n, x.shape...).
func unitTangents(x *graph.Node) *tensor.Dense {
	n := x.Type().Size()
	eye := graph.NewDense(x.DType(), append([]int{n}, x.Shape()...)...)
	for j := range n {
		graph.SetFloat(eye, j*n+j, 1)
	}
	return eye
}

// HVP returns the Hessian–vector product H·v of the scalar f with respect
// to x (v has x's type) by forward over reverse: the JVP of the gradient
// in the direction v. The Hessian itself is never formed.
func HVP(f, x, v *graph.Node) (*graph.Node, error) {
	fail := failer("HVP", graph.CallerSite())
	if err := checkHessian(fail, "HVP", f, x); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fail("v is nil")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if !v.Type().Equal(x.Type()) {
		return nil, fail("v has type %v, want x's %v", v.Type(), x.Type())
	}
	gr, err := grad("HVP", []*graph.Node{f}, nil, []*graph.Node{x}, nil)
	if err != nil {
		return nil, err
	}
	hv, err := jvp("HVP", gr, []*graph.Node{x}, []*graph.Node{v})
	if err != nil {
		return nil, err
	}
	return hv[0], nil
}
