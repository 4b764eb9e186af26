package compile

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// maxFolded bounds the elements of a folded constant: a bigger result is
// computed at run time instead of being stored in the program.
const maxFolded = 1 << 20

// constfold computes at compile time the values whose arguments are all
// constants, by running their op's kernel once, and makes them constants.
// Ops without arguments are left alone: nothing says they are pure.
func constfold(f *function) error {
	for _, v := range f.values {
		if v.kind != graph.KindOp || v != v.instr() || len(v.args) == 0 {
			continue
		}
		outs := v.results()
		if !foldable(v.args, outs) {
			continue
		}
		results := mapSlice(outs, func(o *value) *tensor.Dense { return graph.NewDenseOf(o.typ) })
		ins := mapSlice(v.args, func(a *value) *tensor.Dense { return a.konst })
		if err := forwardUnlessEmpty(v, results, ins); err != nil {
			msg := fmt.Sprintf("nabla: Compile: folding constant %s (node %v): %v", v.opName(), v.node, err)
			if site := v.node.Site(); site != "" {
				msg += " (built at " + site + ")"
			}
			return fmt.Errorf("%s", msg)
		}
		for i, o := range outs {
			*o = value{node: o.node, kind: graph.KindConst, typ: o.typ, konst: results[i], slot: o.slot}
		}
	}
	return nil
}

// foldable reports whether every argument is a constant and no result is
// too big to keep.
func foldable(args, outs []*value) bool {
	for _, a := range args {
		if a.kind != graph.KindConst {
			return false
		}
	}
	for _, o := range outs {
		if o.typ.Size() > maxFolded {
			return false
		}
	}
	return true
}

// forwardUnlessEmpty runs v's kernel unless its outputs have no elements:
// then there is nothing to compute, and a kernel could still loop over the
// outer dimensions of a shape like (1<<40, 0).
func forwardUnlessEmpty(v *value, out, in []*tensor.Dense) error {
	for _, o := range out {
		if graph.ShapeSize(o.Shape()) != 0 {
			return forward(v, out, in)
		}
	}
	return nil
}

// forward runs v's kernel, turning a panic into an error.
func forward(v *value, out, in []*tensor.Dense) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("kernel panicked: %v", r)
		}
	}()
	if v.op != nil {
		return v.op.Forward(out[0], in)
	}
	return v.multi.Forward(out, in)
}
