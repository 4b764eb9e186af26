package compile

import (
	"encoding/binary"
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// cse merges values that compute the same thing (hash-consing): outputs of
// equal ops (graph.OpKey: same type and parameters) applied to the same
// arguments, and scalar constants of equal dtype and value. The first
// stays and later ones are replaced by it; equal multi-output applications
// merge output by output, so whole groups merge. Inputs and parameters
// never merge: each is its own value.
func cse(f *function) error {
	ids := make(map[*value]int, len(f.values))
	seen := map[cseKey]*value{}
	f.rewrite(func(v *value) *value {
		ids[v] = len(ids)
		k, ok := keyOf(v, ids)
		if !ok {
			return v
		}
		w, found, ok := lookup(seen, k)
		switch {
		case !ok:
			return v // a parameter of the op cannot be hashed: leave it alone
		case found:
			return w
		}
		seen[k] = v
		return v
	})
	return nil
}

// cseKey identifies what a value computes. op is graph.OpKey of its op, or
// for a constant its value (a scalarKey or its *tensor.Dense); args lists
// its arguments' ids.
type cseKey struct {
	op    any
	index int
	args  string
}

type scalarKey struct {
	dtype tensor.Dtype
	bits  uint64 // so that 0 and -0 stay apart
}

// scalarBits is a scalar constant's value as bits: an integer's own, so
// that int64s beyond 2⁵³ stay apart, or a float's.
func scalarBits(t *tensor.Dense) uint64 {
	switch t.Dtype() {
	case graph.Int64:
		return uint64(t.Int64s()[0])
	case graph.Int32:
		return uint64(t.Int32s()[0])
	}
	return math.Float64bits(graph.Float(t, 0))
}

// keyOf returns v's key, or false for values that never merge.
func keyOf(v *value, ids map[*value]int) (cseKey, bool) {
	switch v.kind {
	case graph.KindConst:
		if v.typ.IsScalar() {
			return cseKey{op: scalarKey{v.typ.DType, scalarBits(v.konst)}}, true
		}
		return cseKey{op: v.konst}, true // only the very same tensor
	case graph.KindOp:
		var op any = v.op
		if v.multi != nil {
			op = v.multi
		}
		var args []byte
		for _, a := range v.args {
			args = binary.AppendUvarint(args, uint64(ids[a]))
		}
		return cseKey{op: graph.OpKey(op), index: v.index, args: string(args)}, true
	}
	return cseKey{}, false
}

// lookup finds k in seen. ok is false when k cannot be hashed: an op type
// may be comparable yet hold an interface whose dynamic value is not.
func lookup(seen map[cseKey]*value, k cseKey) (v *value, found, ok bool) {
	defer func() {
		if recover() != nil {
			v, found, ok = nil, false, false
		}
	}()
	v, found = seen[k]
	return v, found, true
}
