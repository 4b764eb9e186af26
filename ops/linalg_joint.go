package ops

import (
	"errors"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// errNotDecomposition is what forwardParts reports for an op that no
// decomposition family knows (a caller's bug: the compiler groups only
// the parts DecompositionPart names).
var errNotDecomposition = errors.New("not a part of a decomposition")

// maxParts is the most parts a decomposition has (SVD's U, S and Vh).
const maxParts = 3

// partSlices returns the backing slices of the parts in outs, nil where
// a part is not wanted.
func partSlices[T float](outs [maxParts]*tensor.Dense) [maxParts][]T {
	var s [maxParts][]T
	for i, d := range outs {
		if d != nil {
			s[i] = floats[T](d)
		}
	}
	return s
}

// decompositionPart reports op's family ("Eigh", "QR" or "SVD") and part,
// or false for an op that is not one part of a decomposition.
func decompositionPart(op graph.Op) (family string, part int, ok bool) {
	switch op := op.(type) {
	case eighOp:
		return "Eigh", int(op.part), true
	case qrOp:
		return "QR", int(op.part), true
	case svdOp:
		return "SVD", int(op.part), true
	}
	return "", 0, false
}

// DecompositionPart reports whether op computes one part of a matrix
// decomposition — the eigenvalues or eigenvectors that Eigh applies, Q or
// R of QR, U, S or Vh of SVD — and names its family: parts of one family
// applied to the same matrix can share one factorisation
// (JointDecomposition).
func DecompositionPart(op graph.Op) (family string, ok bool) {
	family, _, ok = decompositionPart(op)
	return family, ok
}

// jointOp computes several parts of one decomposition from one
// factorisation of its input: outputs in the order of parts, each bit for
// bit what the part's own op computes.
type jointOp struct {
	parts [maxParts]graph.Op
	n     int
}

// JointDecomposition returns the multi-output op that computes parts — two
// or more distinct parts of one family, as DecompositionPart reports them
// — from one factorisation of its input, its outputs in parts' order and
// equal bit for bit to the parts' own ops'. It returns false for anything
// else.
func JointDecomposition(parts []graph.Op) (graph.MultiOp, bool) {
	if len(parts) < 2 || len(parts) > maxParts {
		return nil, false
	}
	j := jointOp{n: len(parts)}
	first, _, _ := decompositionPart(parts[0])
	seen := map[int]bool{}
	for i, op := range parts {
		family, part, ok := decompositionPart(op)
		if !ok || family != first || seen[part] {
			return nil, false
		}
		seen[part] = true
		j.parts[i] = op
	}
	return j, true
}

// Name joins the parts' names with "+", as "EighValues+EighVectors".
func (j jointOp) Name() string {
	names := make([]string, j.n)
	for i, op := range j.parts[:j.n] {
		names[i] = op.Name()
	}
	return strings.Join(names, "+")
}

// Types are the parts' types.
func (j jointOp) Types(in []graph.Type) ([]graph.Type, error) {
	ts := make([]graph.Type, j.n)
	for i, op := range j.parts[:j.n] {
		t, err := op.Type(in)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

// Forward factorises on the calling goroutine; see ForwardExec.
func (j jointOp) Forward(out []*tensor.Dense, in []*tensor.Dense) error {
	return j.ForwardExec(nil, out, in)
}

// ForwardExec factorises each matrix once, in the machine's scratch, and
// writes every part.
func (j jointOp) ForwardExec(e *graph.Exec, out []*tensor.Dense, in []*tensor.Dense) error {
	return forwardParts(e, j.parts[0], out[:j.n], in[0], j.parts[1:j.n]...)
}

// forwardParts decomposes each matrix of a once and writes part op's
// output into out[0] and each of others' into the out that follows.
func forwardParts(e *graph.Exec, op graph.Op, out []*tensor.Dense, a *tensor.Dense, others ...graph.Op) error {
	var outs [maxParts]*tensor.Dense
	family, part, _ := decompositionPart(op)
	outs[part] = out[0]
	for i, o := range others {
		_, part, _ := decompositionPart(o)
		outs[part] = out[1+i]
	}
	switch family {
	case "Eigh":
		return eighParts(e, outs, a)
	case "QR":
		return qrParts(e, outs, a)
	case "SVD":
		return svdParts(e, outs, a)
	}
	return errNotDecomposition
}
