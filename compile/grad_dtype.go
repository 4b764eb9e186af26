package compile

import "github.com/nabla-go/nabla/graph"

// checkGradDTypes refuses to differentiate integers: an integer output has
// no derivative, and an integer node (indices, labels) has no neighbouring
// values to be differentiated with respect to.
func checkGradDTypes(ys, wrt []*graph.Node, fail func(string, ...any) error) error {
	for _, y := range ys {
		if graph.IsInteger(y.DType()) {
			return fail("output %v is an integer: only float32 and float64 outputs are differentiated (cast with ops.Cast)", y)
		}
	}
	for _, x := range wrt {
		if graph.IsInteger(x.DType()) {
			return fail("cannot differentiate with respect to %v: integer values have no gradient; "+
				"differentiate with respect to a float node (an input declared float32 or float64, say)", x)
		}
	}
	return nil
}

// flowsInto reports whether gradients may flow into n: never into an
// integer node, whatever an op's Backward would return for it.
func flowsInto(n *graph.Node) bool { return graph.IsFloat(n.DType()) }
