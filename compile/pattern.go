package compile

import (
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// JacobianPattern returns the sparsity pattern of the Jacobian of y with
// respect to x, found from the graph without running it: each op's
// graph.ElementDeps, or, for an op without one, every element of its
// inputs. It is never smaller than the Jacobian's nonzeros at any point;
// it is exact for elementwise, broadcasting, slicing, padding,
// concatenating and reducing graphs (stencils among them).
//
// The pattern is an error when the sets it propagates need more than
// graph.MemoryLimit, or when a node of y's ancestry is found dense (its
// elements depend, on average, on more than half of x's, over a large
// enough node): a sparse Jacobian would cost as much as a dense one.
func JacobianPattern(y, x *graph.Node) (*Pattern, error) {
	return jacobianPattern(failer("JacobianPattern", graph.CallerSite()), insteadOfSparseJ, y, x)
}

// jacobianPattern is JacobianPattern, its errors made by fail and saying
// what to use instead.
func jacobianPattern(fail func(string, ...any) error, instead string, y, x *graph.Node) (*Pattern, error) {
	if _, err := checkGradRequest([]*graph.Node{y}, nil, []*graph.Node{x}, fail); err != nil {
		return nil, err
	}
	pr := &propagation{n: x.Type().Size(), limit: graph.MemoryLimit(), fail: fail, instead: instead}
	// x's elements each depend on themselves.
	if err := pr.hold(x, pr.n, setBytes+entryBytes); err != nil {
		return nil, err
	}
	deps := map[*graph.Node][][]int{}
	self := make([][]int, pr.n)
	for k := range self {
		self[k] = []int{k}
	}
	deps[x] = self
	if y.ID() > x.ID() {
		for _, n := range y.Graph().Nodes()[x.ID()+1 : y.ID()+1] {
			if n.Kind() != graph.KindOp {
				continue
			}
			d, err := pr.node(n, deps)
			if err != nil {
				return nil, err
			}
			if d != nil {
				deps[n] = d
			}
		}
	}
	m := y.Type().Size()
	rows := deps[y]
	nnz := 0
	for _, r := range rows { // the rows of an op without ElementDeps share one set
		nnz += len(r)
		if err := pr.hold(y, len(r), entryBytes); err != nil {
			return nil, err
		}
	}
	if err := pr.hold(y, m+1, entryBytes); err != nil {
		return nil, err
	}
	p := &Pattern{Rows: m, Columns: pr.n, RowStart: make([]int, m+1), Cols: make([]int, 0, nnz)}
	for i := range p.Rows {
		if rows != nil {
			p.Cols = append(p.Cols, rows[i]...)
		}
		p.RowStart[i+1] = len(p.Cols)
	}
	return p, nil
}

// The bytes of a set's slice header and of one of its entries.
const (
	setBytes   = 24
	entryBytes = 8
)

// denseEntries is the size, in entries, past which a dense node stops the
// propagation: colouring a dense pattern of n columns takes time n³, and
// a dense Jacobian does as well with fewer products.
const denseEntries = 1 << 16

// propagation follows sets of x's elements through the graph, holding no
// more bytes than limit.
type propagation struct {
	n       int // elements of x
	used    int64
	limit   int64
	fail    func(string, ...any) error
	instead string
	union   setUnion
}

// hold accounts for k more items of size bytes each, held for node at:
// an error if they go over the memory limit.
func (pr *propagation) hold(at *graph.Node, k int, size int64) error {
	if int64(k) > (pr.limit-pr.used)/size {
		return pr.fail("the sparsity pattern, propagated to %v, needs more than the memory limit of %s (graph.SetMemoryLimit); %s",
			at, graph.FormatBytes(pr.limit), pr.instead)
	}
	pr.used += int64(k) * size
	return nil
}

// node is, per element of n, the elements of x it may depend on; nil
// when it depends on none.
func (pr *propagation) node(n *graph.Node, deps map[*graph.Node][][]int) ([][]int, error) {
	ins := n.Inputs()
	if !slices.ContainsFunc(ins, func(in *graph.Node) bool { return deps[in] != nil }) {
		return nil, nil
	}
	size := n.Type().Size()
	if err := pr.hold(n, size, setBytes); err != nil {
		return nil, err
	}
	out := make([][]int, size)
	ed, ok := n.Op().(graph.ElementDeps)
	if !ok {
		// Every element may depend on every element of the inputs: one
		// set, shared.
		u := &pr.union
		for _, in := range ins {
			for _, d := range deps[in] {
				u.add(d)
			}
		}
		all, allocated := u.result()
		if err := pr.check(n, size, size, float64(size)*float64(len(all)), allocated); err != nil {
			return nil, err
		}
		for e := range out {
			out[e] = all
		}
		return out, nil
	}
	types := make([]graph.Type, len(ins))
	for i, in := range ins {
		types[i] = in.Type()
	}
	entries := 0.0 // in out[:e], shared sets counted once per element
	for e := range out {
		u := &pr.union
		ed.Deps(types, n.Type(), e, func(i, k int) {
			if d := deps[ins[i]]; d != nil {
				u.add(d[k])
			}
		})
		set, allocated := u.result()
		out[e] = set
		entries += float64(len(set))
		if err := pr.check(n, size, e+1, entries, allocated); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// check accounts for a set just made for node n, of size elements, with
// allocated new entries: n's first rows elements' sets now hold entries
// in all (shared sets counted once per element). It is an error over the
// memory limit, or when n is dense: its sets, past a sample of its
// elements, average more than half of x's elements, and all of them
// would hold over denseEntries.
func (pr *propagation) check(n *graph.Node, size, rows int, entries float64, allocated int) error {
	if err := pr.hold(n, allocated, entryBytes); err != nil {
		return err
	}
	dense := float64(size) * float64(pr.n)
	if size < 64 || rows < max(64, size/64) || dense/2 <= denseEntries || 2*entries <= float64(rows)*float64(pr.n) {
		return nil
	}
	return pr.fail("the sparsity pattern is dense: the elements of %v depend on %.0f of x's %d elements on average, "+
		"so that a sparse derivative costs as much as a dense one; %s", n, entries/float64(rows), pr.n, pr.instead)
}

// setUnion gathers sorted sets of distinct elements into their union.
// Sets are appended and sorted in batches, so that a union of many
// costs O(t log t) for t elements in all (a pairwise merge costs the
// square); what it keeps between batches is at most twice the union.
type setUnion struct {
	first  []int // the one set added so far, uncopied
	parts  int   // sets added
	buf    []int // from the second set on: the union so far, then more elements
	sorted int   // buf[:sorted] is sorted and distinct
}

// add adds a set to the union.
func (u *setUnion) add(s []int) {
	if len(s) == 0 {
		return
	}
	u.parts++
	switch {
	case u.parts == 1:
		u.first = s
		return
	case u.parts == 2:
		u.buf = append(u.buf[:0], u.first...)
		u.sorted = len(u.buf)
	}
	u.buf = append(u.buf, s...)
	if len(u.buf)-u.sorted > max(u.sorted, 64) {
		u.compact()
	}
}

func (u *setUnion) compact() {
	slices.Sort(u.buf)
	u.buf = slices.Compact(u.buf)
	u.sorted = len(u.buf)
}

// result returns the union and starts a new one: the one set added (not
// copied), or a new set of allocated elements.
func (u *setUnion) result() (set []int, allocated int) {
	defer func() { u.first, u.parts = nil, 0 }()
	switch u.parts {
	case 0:
		return nil, 0
	case 1:
		return u.first, 0
	}
	u.compact()
	return slices.Clone(u.buf), len(u.buf)
}
