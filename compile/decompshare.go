package compile

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// decompshare decomposes a matrix once for all the parts read of it:
// where two or more parts of one decomposition of the same matrix remain
// (Eigh's values and vectors, which every gradient of Eigh reads; QR's Q
// and R; SVD's U, S and Vh), they become the outputs of one
// ops.JointDecomposition, computed where the first of them was. Each
// part keeps its bits, and its value its slot and readers.
func decompshare(f *function) error {
	type key struct {
		family string
		matrix *value
	}
	parts := map[key][]*value{}
	var order []key
	for _, v := range f.values {
		if v.op == nil || len(v.args) != 1 {
			continue
		}
		family, ok := ops.DecompositionPart(v.op)
		if !ok {
			continue
		}
		k := key{family, v.args[0]}
		if parts[k] == nil {
			order = append(order, k)
		}
		parts[k] = append(parts[k], v)
	}
	for _, k := range order {
		vs := parts[k]
		joint, ok := ops.JointDecomposition(mapSlice(vs, func(v *value) graph.Op { return v.op }))
		if !ok {
			continue // one part, or the same part twice (CSE off)
		}
		for i, v := range vs {
			v.op, v.multi, v.index, v.group = nil, joint, i, vs
		}
	}
	return nil
}
