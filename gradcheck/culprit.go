package gradcheck

import (
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// culprit looks for the op to blame for a derivative mismatch: it computes
// the value of every node of the function at the checked point, then runs
// the local first-derivative check of each op node between the checked
// inputs and the outputs, in creation order, on the values its inputs had,
// and returns the first that fails. An author then sees the op whose
// Backward is wrong (and where it was built) rather than two Jacobians.
//
// Inputs for which an op's Backward declares no gradient (nil) are checked
// only when no op fails otherwise: a mask's condition legitimately jumps
// under finite differences, but StopGradient placed where a gradient is
// needed is a culprit too.
func (in *instance) culprit(opts Options) *Culprit {
	nodes := dependents(in.ys, pick(in.xs, in.checked))
	values, err := in.nodeValues()
	if err != nil {
		return nil
	}
	depends := map[*graph.Node]bool{}
	for _, n := range nodes {
		depends[n] = true
	}
	local := opts
	local.Fast = false
	for _, undeclared := range []bool{false, true} {
		for _, n := range nodes {
			if n.Kind() != graph.KindOp || n.Outputs()[0] != n {
				continue
			}
			declared := declaredGradients(n)
			var idx []int
			for i, x := range n.Inputs() {
				if depends[x] && declared[i] != undeclared {
					idx = append(idx, i)
				}
			}
			if len(idx) == 0 {
				continue
			}
			vals := make([]*tensor.Dense, len(n.Inputs()))
			for i, x := range n.Inputs() {
				vals[i] = values[x]
			}
			local.Inputs = idx
			build := func(xs []*graph.Node) ([]*graph.Node, *Error) { return graph.Reapply(nil, n, xs...), nil }
			e := checkDerivatives(build, vals, local, FirstDerivative, true)
			if e != nil && e.Problem == FirstDerivative {
				e.Func, e.Op = "local check", n.OpName()
				return &Culprit{Op: n.OpName(), Node: n.String(), Site: n.Site(), NoGradient: undeclared, Err: e}
			}
		}
	}
	return nil
}

// nodeValues runs one program computing every node the outputs depend on,
// at the unperturbed inputs.
func (in *instance) nodeValues() (map[*graph.Node]*tensor.Dense, error) {
	var all []*graph.Node
	for id, ok := range ancestors(in.ys) {
		if ok {
			all = append(all, in.g.Node(id))
		}
	}
	p, err := compile.Compile(all, compile.WithFixedDraws())
	if err != nil {
		return nil, err
	}
	m, err := vm.New(p)
	if err != nil {
		return nil, err
	}
	if err := m.Run(in.feeds); err != nil {
		return nil, err
	}
	values := make(map[*graph.Node]*tensor.Dense, len(all))
	for _, n := range all {
		v, err := m.Value(n)
		if err != nil {
			return nil, err
		}
		if values[n], err = graph.CloneDense(v); err != nil {
			return nil, err
		}
	}
	return values, nil
}

// declaredGradients reports, per input of n, whether n's op's Backward
// returns a gradient for it when every input needs one. It calls Backward
// on a copy of the op in a scratch graph; if that fails, every input
// counts as declared, so the local check reports the failure.
func declaredGradients(n *graph.Node) []bool {
	declared := make([]bool, len(n.Inputs()))
	for i := range declared {
		declared[i] = true
	}
	g := graph.New()
	xs := make([]*graph.Node, len(n.Inputs()))
	for i, x := range n.Inputs() {
		xs[i] = g.Input("x", x.DType(), x.Shape()...)
	}
	outs := graph.Reapply(nil, n, xs...)
	if g.Err() != nil {
		return declared
	}
	gradOuts := make([]*graph.Node, len(outs))
	for k, o := range outs {
		gradOuts[k] = g.Input("g", o.DType(), o.Shape()...)
	}
	grads, err := compile.Backward(outs[0], gradOuts, declared)
	if err != nil {
		return declared
	}
	for i, gr := range grads {
		declared[i] = gr != nil
	}
	return declared
}
