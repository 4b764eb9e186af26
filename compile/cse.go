package compile

import (
	"encoding/binary"
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// cse merges values that compute the same thing (hash-consing): outputs of
// equal ops (graph.OpKey: same type and parameters) applied to the same
// arguments, and constants of equal dtype, shape and bits (small ones:
// contentMax). The first
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

// contentKey is a small tensor constant's dtype, shape and bits: two
// constants with equal keys hold the same value (NaNs with equal bits
// included; 0 and -0 apart). Constants are the graph's own copies (Const
// clones what it is given), so merging them cannot be seen by a user.
type contentKey struct {
	dtype tensor.Dtype
	shape string
	bits  string
}

// contentMax is the largest constant, in elements, that CSE keys by its
// bits; larger ones merge only with the very same tensor, so that hashing
// never costs more than a small copy.
const contentMax = 4096

// contentOf returns t's contentKey, or false when t is too large.
func contentOf(t *tensor.Dense) (contentKey, bool) {
	n := t.Size()
	if n > contentMax {
		return contentKey{}, false
	}
	var shape, bits []byte
	for _, d := range t.Shape() {
		shape = binary.AppendUvarint(shape, uint64(d))
	}
	for i := range n {
		var b uint64
		switch t.Dtype() {
		case graph.Int64:
			b = uint64(t.Int64s()[i])
		case graph.Int32:
			b = uint64(uint32(t.Int32s()[i]))
		case graph.Float32:
			b = uint64(math.Float32bits(t.Float32s()[i]))
		default:
			b = math.Float64bits(graph.Float(t, i))
		}
		bits = binary.LittleEndian.AppendUint64(bits, b)
	}
	return contentKey{t.Dtype(), string(shape), string(bits)}, true
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
		if k, ok := contentOf(v.konst); ok {
			return cseKey{op: k}, true
		}
		return cseKey{op: v.konst}, true // a large one: only the very same tensor
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
