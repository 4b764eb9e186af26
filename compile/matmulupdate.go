package compile

import (
	"slices"

	"github.com/nabla-go/nabla/ops"
)

// matmulupdate joins an optimiser's one-pass step (pass fuse: Adam's,
// ops.FusedOp.OnePass) to the product its gradient is, a weight's
// gradient Xᵀ·dY, where nothing else reads that gradient: not a clipping
// norm, an all-reduce, an output or an update. One ops.MatMulUpdateOp
// instruction then computes the product a block of rows at a time and
// runs the step on each block while it is in cache, so the gradient is
// never written in full nor read back. Every value keeps its bits.
//
// The instruction takes the step's place, after the product's: the
// product's operands come before it, and nothing else read the product.
func matmulupdate(f *function) error {
	readers := map[*value]int{} // instructions reading each value, outputs and updates counted
	for _, v := range f.values {
		if v.multi != nil && v.index != 0 {
			continue // the group's instruction is counted once, at its first output
		}
		seen := map[*value]bool{}
		for _, r := range v.results() {
			for _, a := range r.args {
				if !seen[a] {
					seen[a] = true
					readers[a]++
				}
			}
		}
	}
	for _, o := range f.outputs {
		readers[o]++
	}
	for _, u := range f.updates {
		readers[u.expr]++
	}
	dead := map[*value]bool{}
	for _, v := range f.values {
		m, ok := v.multi.(ops.FusedMulti)
		if !ok || v.index != 0 {
			continue
		}
		step := m.Fused()
		k := step.OnePassGrad()
		if k < 0 {
			continue
		}
		g := v.args[k]
		product, isProduct := g.op.(ops.MatMulOp)
		if !isProduct || readers[g] != 1 || dead[g] || len(g.args) != 2 {
			continue
		}
		op, ok := ops.NewMatMulUpdate(step, k, product, g.node, g.args[0].typ, g.args[1].typ)
		if !ok {
			continue
		}
		args := slices.Clone(v.args)
		args[k] = g.args[0]
		args = append(args, g.args[1])
		for _, r := range v.group {
			r.multi, r.args = op, slices.Clone(args)
		}
		dead[g] = true
	}
	if len(dead) > 0 {
		f.values = slices.DeleteFunc(f.values, func(v *value) bool { return dead[v] })
	}
	return nil
}
