package compile

import (
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// hoistUpdates reorders the values so that each parameter's update comes
// as soon as the values it needs are known, rather than where the updates
// were built, at the end of a training step: a weight's gradient product,
// its optimiser's arithmetic and its update then run right after the
// gradient of the layer's output, which dies there, as do the activations
// the product reads; a checkpointed segment's recomputed values die
// before the next segment's are made. Left at the end, the products (or,
// sunk to their readers by sinkOpaque, the values they read) would stay
// alive to the end of the run.
//
// The values moved are an update's tail, the values only updates need,
// and only the updates of one parameter and of the optimiser's state
// feeding it (Adam's moments), that read a gradient: they run as soon as
// what they read is computed (an update's value also once the values
// before it reading its parameter are, so that it may still be computed
// in the parameter's slot, pass inplace); and the values only updates
// need that the optimiser computes from its state alone (a moment times
// its decay, a bias correction from the step count), which run just
// before the first moved value reading them. The other values keep
// their order, and no value moves down; the leaves (parameters, inputs,
// constants) come first, in their order.
func (f *function) hoistUpdates() {
	if len(f.updates) == 0 {
		return
	}
	readers := make(map[*value][]*value, len(f.values)) // an instruction's readers
	for _, v := range f.values {
		for _, a := range v.args {
			readers[a.instr()] = appendNew(readers[a.instr()], v.instr())
		}
	}
	tail, forUpdates := f.updateTails(readers)
	byParam := f.paramReaders()
	pos := make(map[*value]int, len(f.values))
	for i, v := range f.values {
		pos[v] = i
	}
	// The backward pass begins (for this purpose) at the first tail
	// instruction reading a computed value outside the tails: a gradient's
	// product.
	begin := len(f.values)
	for i, v := range f.values {
		if tail[v] && slices.ContainsFunc(v.args, func(a *value) bool { return a.kind == graph.KindOp && !tail[a.instr()] }) {
			begin = i
			break
		}
	}
	// The instructions that move, and their dependencies: the
	// instructions computing their arguments and, for an update's value,
	// the earlier readers of its parameter. Lazy ones are for updates
	// only, made after the backward pass begins from leaves and lazy
	// values alone (the optimiser's arithmetic on its state); eager ones
	// are of a tail, not lazy, and read an eager value or a value for
	// updates only made after the backward pass begins (a gradient).
	lazy := map[*value]bool{}
	var free []*value
	sc := scheduler{deps: map[*value][]*value{}, dependents: map[*value][]*value{}, eager: map[*value]bool{},
		pending: map[*value]int{}, met: map[*value]bool{}, done: map[*value]bool{}}
	for i, v := range f.values {
		if v != v.instr() || v.kind != graph.KindOp {
			continue
		}
		leafy, late := true, false
		for _, o := range v.results() {
			for _, a := range o.args {
				leafy = leafy && (a.kind != graph.KindOp || lazy[a])
				late = late || sc.eager[a.instr()] || forUpdates[a] && pos[a.instr()] >= begin && !lazy[a]
			}
		}
		for _, o := range v.results() {
			lazy[o] = leafy && forUpdates[o] && i > begin
		}
		switch {
		case lazy[v]:
		case tail[v] && late:
			sc.eager[v] = true
		default:
			continue
		}
		var ds []*value
		for _, o := range v.results() {
			for _, a := range o.args {
				ds = append(ds, a.instr())
			}
			for _, r := range byParam[o] {
				if pos[r] < pos[v] {
					ds = append(ds, r)
				}
			}
		}
		slices.SortFunc(ds, func(a, b *value) int { return pos[a] - pos[b] })
		sc.deps[v] = slices.Compact(ds)
		sc.pending[v] = len(sc.deps[v])
		for _, d := range sc.deps[v] {
			sc.dependents[d] = append(sc.dependents[d], v)
		}
		if len(sc.deps[v]) == 0 {
			free = append(free, v) // lazy, and reads nothing
		}
	}
	for _, v := range f.values {
		if v.kind != graph.KindOp {
			sc.emit(v) // leaves first, in their order (that of Program.Params)
		}
	}
	for _, v := range free {
		sc.meet(v)
	}
	for _, v := range f.values {
		if v == v.instr() && !sc.done[v] {
			sc.emit(v)
		}
		for len(sc.ready) > 0 {
			r := sc.ready[len(sc.ready)-1]
			sc.ready = sc.ready[:len(sc.ready)-1]
			if !sc.done[r] {
				sc.emit(r)
			}
		}
	}
	copy(f.values, sc.order)
}

// scheduler orders a function's instructions for hoistUpdates: in their
// order, but for those that move, which may run once their dependencies
// are met: eager ones at once, lazy ones just before the first moved
// instruction reading them.
type scheduler struct {
	deps, dependents map[*value][]*value
	eager            map[*value]bool
	pending          map[*value]int  // a moving instruction's dependencies not yet met
	met              map[*value]bool // computed, or may be when read
	done             map[*value]bool
	ready            []*value // eager instructions whose dependencies are met
	order            []*value
}

// emit appends v's instruction, after the lazy ones it reads.
func (s *scheduler) emit(v *value) {
	for _, d := range s.deps[v] {
		if !s.done[d] {
			s.emit(d)
		}
	}
	s.done[v] = true
	s.order = append(s.order, v.results()...)
	s.meet(v)
}

// meet records that v is computed, or may be when read: the moving
// instructions waiting on it for nothing else are ready.
func (s *scheduler) meet(v *value) {
	if s.met[v] {
		return
	}
	s.met[v] = true
	for _, r := range s.dependents[v] {
		if s.pending[r]--; s.pending[r] == 0 {
			if s.eager[r] {
				s.ready = append(s.ready, r)
			} else {
				s.meet(r)
			}
		}
	}
}

// updateTails returns the instructions of the updates' tails (see
// hoistUpdates) and the values only updates need.
func (f *function) updateTails(readers map[*value][]*value) (tail, forUpdates map[*value]bool) {
	output := make(map[*value]bool, len(f.outputs))
	for _, o := range f.outputs {
		output[o] = true
	}
	// Updates feeding one another (a moment read by its parameter's
	// update) are one parameter's: one set.
	sets := newUnionFind(len(f.updates))
	own := map[*value]int{} // an update's value: its set's first member
	for i, u := range f.updates {
		if _, ok := own[u.expr]; !ok {
			own[u.expr] = i
		}
	}
	// whose: the set of the updates each value feeds, -1 for none and -2
	// for several.
	whose := map[*value]int{}
	forUpdates = map[*value]bool{}
	for i := len(f.values) - 1; i >= 0; i-- {
		v := f.values[i]
		if v.kind != graph.KindOp || v != v.instr() {
			continue
		}
		set, only, needed := -1, true, false
		for _, o := range v.results() {
			if u, ok := own[o]; ok {
				needed, set = true, u
			}
			only = only && !output[o]
		}
		for _, r := range readers[v] {
			needed = true
			only = only && forUpdates[r]
			switch s := whose[r]; {
			case s == -2 || set == -2:
				set = -2
			case set == -1:
				set = s
			case s >= 0 && sets.find(s) != sets.find(set):
				if _, ok := own[v]; ok {
					sets.union(set, s) // an update feeding another's: one parameter's
				} else {
					set = -2
				}
			}
		}
		whose[v] = set
		for _, o := range v.results() {
			forUpdates[o] = only && needed
		}
	}
	tail = map[*value]bool{}
	for v, s := range whose {
		tail[v] = forUpdates[v] && s >= 0
	}
	return tail, forUpdates
}

// paramReaders returns, for each update's value, the other instructions
// that read a parameter it updates.
func (f *function) paramReaders() map[*value][]*value {
	exprs := map[*value][]*value{} // a parameter: the values updating it
	for _, u := range f.updates {
		exprs[u.param] = append(exprs[u.param], u.expr)
	}
	readers := map[*value][]*value{}
	for _, v := range f.values {
		for _, a := range v.args {
			for _, e := range exprs[a] {
				if e != v {
					readers[e] = appendNew(readers[e], v.instr())
				}
			}
		}
	}
	return readers
}

// appendNew appends v to vs, which lists the values in their order,
// unless it is the last already.
func appendNew(vs []*value, v *value) []*value {
	if len(vs) > 0 && vs[len(vs)-1] == v {
		return vs
	}
	return append(vs, v)
}

// unionFind is a partition of the integers below its length: each
// element's parent, a set's root being its own.
type unionFind []int

func newUnionFind(n int) unionFind {
	u := make(unionFind, n)
	for i := range u {
		u[i] = i
	}
	return u
}

func (u unionFind) find(i int) int {
	for u[i] != i {
		u[i] = u[u[i]]
		i = u[i]
	}
	return i
}

func (u unionFind) union(i, j int) {
	u[u.find(j)] = u.find(i)
}
