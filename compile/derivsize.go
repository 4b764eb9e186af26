package compile

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// The derivative builders (Jacobian, Hessian, their sparse forms and
// patterns, PerExampleGradients) build tensors whose size grows with the
// product of two sizes: a Jacobian's m·n entries, n unit tangents of n
// elements each. Each checks those sizes, with overflow-checked
// multiplication, against graph.MemoryLimit before it allocates anything,
// and says in its error what to use instead.

// failer makes the errors of caller, built at site.
func failer(caller, site string) func(format string, args ...any) error {
	return func(format string, args ...any) error {
		return &graph.Error{Op: caller, Err: fmt.Errorf(format, args...), Site: site}
	}
}

// checkRank reports, through fail, a derivative (what) whose rank is
// above the ops' limit (ops.MaxFusedRank is that limit), which the
// reshape building it would refuse in its own name.
func checkRank(fail func(string, ...any) error, what string, shape []int) error {
	if len(shape) > ops.MaxFusedRank {
		return fail("%s has rank %d, above the supported %d", what, len(shape), ops.MaxFusedRank)
	}
	return nil
}

// checkBytes reports, through fail, a tensor of dtype and shape (what it
// is named in the error) whose size overflows an int or whose bytes exceed
// graph.MemoryLimit; instead says what to use in its place.
func checkBytes(fail func(string, ...any) error, what string, dtype tensor.Dtype, shape []int, instead string) error {
	if _, err := graph.Bytes(dtype, shape, 0); err != nil {
		return fail("%s: %v; %s", what, err, instead)
	}
	return nil
}

// joinShapes is a ++ b.
func joinShapes(a, b []int) []int { return append(append([]int(nil), a...), b...) }

// What to use in place of a dense derivative too large to form.
const (
	insteadOfJacobian = "compile.JVP and compile.Gradients give Jacobian–vector and vector–Jacobian products without forming it, " +
		"compile.SparseJacobian only its nonzeros"
	insteadOfHessian = "compile.HVP gives Hessian–vector products without forming it, compile.SparseHessian only its nonzeros"
	insteadOfSparseJ = "compile.Jacobian forms it dense; compile.JVP and compile.Gradients give its products with vectors without forming it"
	insteadOfSparseH = "compile.Hessian forms it dense; compile.HVP gives its products with vectors without forming it"
)

// checkDerivative checks the nodes given to caller: y and x not nil,
// healthy, of one graph, and float.
func checkDerivative(fail func(string, ...any) error, y, x *graph.Node) error {
	ys, xs := []*graph.Node{y}, []*graph.Node{x}
	if _, err := checkGradRequest(ys, nil, xs, fail); err != nil {
		return err
	}
	return checkGradDTypes(ys, xs, fail)
}

// checkHessian checks the nodes given to caller, which takes the Hessian
// of the scalar f with respect to x.
func checkHessian(fail func(string, ...any) error, caller string, f, x *graph.Node) error {
	if err := checkDerivative(fail, f, x); err != nil {
		return err
	}
	if !f.Type().IsScalar() {
		return fail("%s", notScalar(caller, 0, f))
	}
	return nil
}

// notScalar says, in the words of caller, that output i, y, needs a seed
// gradient or must be a scalar.
func notScalar(caller string, i int, y *graph.Node) string {
	switch caller {
	case "Grad":
		return fmt.Sprintf("y, %v, is not a scalar: Grad differentiates a scalar "+
			"(compile.Gradients takes a seed for a vector–Jacobian product, compile.Jacobian gives every derivative)", y)
	case "Gradients":
		return fmt.Sprintf("output %d, %v, is not a scalar: give it a seed gradient of its type", i, y)
	case "HVP":
		return fmt.Sprintf("f, %v, is not a scalar: HVP multiplies by the Hessian of a scalar function", y)
	}
	return fmt.Sprintf("f, %v, is not a scalar: a Hessian is of a scalar function", y)
}

// zeros is a node of zeros of type t: a constant, or, where the constant
// would pass graph.MemoryLimit, a scalar zero broadcast to t, which
// allocates nothing until a machine runs it (and vm.New checks its
// buffers). A zero gradient or tangent is as big as its node, which may
// be any size.
func zeros(g *graph.Graph, t graph.Type) *graph.Node {
	if _, err := graph.Bytes(t.DType, t.Shape, 0); err != nil {
		return ops.BroadcastTo(g.Scalar(0, t.DType), t.Shape...)
	}
	return g.Const(graph.NewDenseOf(t))
}
