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
	o := newOrdering(f)
	o.classify(f)
	byParam := f.paramReaders()
	// The instructions that move, and their dependencies: the
	// instructions computing their arguments and, for an update's value,
	// the earlier readers of its parameter.
	sc := scheduler{ordering: o, deps: make([][]int, len(f.values)), dependents: make([][]int, len(f.values)),
		pending: make([]int, len(f.values)), met: make([]bool, len(f.values)), done: make([]bool, len(f.values))}
	var free []int
	for i, v := range f.values {
		if !o.lazy[i] && !o.eager[i] || v != v.instr() {
			continue
		}
		var ds []int
		for _, r := range v.results() {
			for _, a := range r.args {
				ds = append(ds, o.at[a])
			}
			for _, x := range byParam[r] {
				if j := o.at[x]; j < i {
					ds = append(ds, j)
				}
			}
		}
		slices.Sort(ds)
		sc.deps[i] = slices.Compact(ds)
		sc.pending[i] = len(sc.deps[i])
		for _, d := range sc.deps[i] {
			sc.dependents[d] = append(sc.dependents[d], i)
		}
		if len(ds) == 0 {
			free = append(free, i) // lazy, and reads nothing
		}
	}
	for i, v := range f.values {
		if v.kind != graph.KindOp {
			sc.emit(i) // leaves first, in their order (that of Program.Params)
		}
	}
	for _, i := range free {
		sc.meet(i)
	}
	for i, v := range f.values {
		if v == v.instr() && !sc.done[i] {
			sc.emit(i)
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

// ordering describes a function's instructions for hoistUpdates, each
// by its position (that of its first value).
type ordering struct {
	values     []*value
	at         map[*value]int // the position of each value's instruction
	readers    [][]int        // the positions of the instructions reading each
	forUpdates []bool         // only updates need its values
	tail       []bool         // of an update's tail: for one parameter's updates only
	lazy       []bool         // for updates only, from the optimiser's state alone
	eager      []bool         // of a tail, and reads a gradient
}

func newOrdering(f *function) *ordering {
	n := len(f.values)
	o := &ordering{values: f.values, at: make(map[*value]int, n), readers: make([][]int, n),
		forUpdates: make([]bool, n), tail: make([]bool, n), lazy: make([]bool, n), eager: make([]bool, n)}
	for i, v := range f.values {
		o.at[v] = i
		if v != v.instr() {
			o.at[v] = o.at[v.instr()]
		}
	}
	for _, v := range f.values {
		for _, a := range v.args {
			j := o.at[a]
			if rs := o.readers[j]; len(rs) == 0 || rs[len(rs)-1] != o.at[v] {
				o.readers[j] = append(rs, o.at[v])
			}
		}
	}
	return o
}

// classify finds the values only updates need and the tails (see
// updateTails), then the lazy and eager instructions. The backward pass
// begins (for this purpose) at the first tail instruction reading a
// computed value outside the tails: a gradient's product. Lazy
// instructions are for updates only, made after the backward pass begins
// from leaves and lazy values alone (the optimiser's arithmetic on its
// state); eager ones are of a tail, not lazy, and read an eager value or
// a value for updates only made after the backward pass begins (a
// gradient).
func (o *ordering) classify(f *function) {
	o.updateTails(f)
	begin := len(o.values)
	for i, v := range o.values {
		if o.tail[i] && slices.ContainsFunc(v.args, func(a *value) bool { return a.kind == graph.KindOp && !o.tail[o.at[a]] }) {
			begin = i
			break
		}
	}
	for i, v := range o.values {
		if v != v.instr() || v.kind != graph.KindOp {
			continue
		}
		leafy, late := true, false
		for _, r := range v.results() {
			for _, a := range r.args {
				j := o.at[a]
				leafy = leafy && (a.kind != graph.KindOp || o.lazy[j])
				late = late || o.eager[j] || o.forUpdates[j] && j >= begin && !o.lazy[j]
			}
		}
		o.lazy[i] = leafy && o.forUpdates[i] && i > begin
		o.eager[i] = !o.lazy[i] && o.tail[i] && late
	}
}

// updateTails marks the instructions only updates need, and those of the
// updates' tails (see hoistUpdates).
func (o *ordering) updateTails(f *function) {
	output := make(map[*value]bool, len(f.outputs))
	for _, v := range f.outputs {
		output[v] = true
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
	// whose: the set of the updates each instruction feeds, -1 for none
	// and -2 for several.
	whose := make([]int, len(o.values))
	for i := len(o.values) - 1; i >= 0; i-- {
		v := o.values[i]
		whose[i] = -1
		if v.kind != graph.KindOp || v != v.instr() {
			continue
		}
		set, only, needed := -1, true, false
		update := false
		for _, r := range v.results() {
			if u, ok := own[r]; ok {
				needed, set, update = true, u, true
			}
			only = only && !output[r]
		}
		for _, j := range o.readers[i] {
			needed = true
			only = only && o.forUpdates[j]
			switch s := whose[j]; {
			case s == -2 || set == -2:
				set = -2
			case set == -1:
				set = s
			case s >= 0 && sets.find(s) != sets.find(set):
				if update {
					sets.union(set, s) // an update feeding another's: one parameter's
				} else {
					set = -2
				}
			}
		}
		whose[i] = set
		o.forUpdates[i] = only && needed
		o.tail[i] = o.forUpdates[i] && set >= 0
	}
	for i, v := range o.values { // an instruction's other values
		if j := o.at[v]; j != i {
			o.forUpdates[i], o.tail[i] = o.forUpdates[j], o.tail[j]
		}
	}
}

// scheduler orders a function's instructions for hoistUpdates: in their
// order, but for those that move, which may run once their dependencies
// are met: eager ones at once, lazy ones just before the first moved
// instruction reading them.
type scheduler struct {
	*ordering
	deps, dependents [][]int
	pending          []int  // a moving instruction's dependencies not yet met
	met              []bool // computed, or may be when read
	done             []bool
	ready            []int // eager instructions whose dependencies are met
	order            []*value
}

// emit appends instruction i, after the lazy ones it reads.
func (s *scheduler) emit(i int) {
	for _, d := range s.deps[i] {
		if !s.done[d] {
			s.emit(d)
		}
	}
	s.done[i] = true
	s.order = append(s.order, s.values[i].results()...)
	s.meet(i)
}

// meet records that instruction i is computed, or may be when read: the
// moving instructions waiting on it for nothing else are ready.
func (s *scheduler) meet(i int) {
	if s.met[i] {
		return
	}
	s.met[i] = true
	for _, r := range s.dependents[i] {
		if s.pending[r]--; s.pending[r] == 0 {
			if s.eager[r] {
				s.ready = append(s.ready, r)
			} else {
				s.meet(r)
			}
		}
	}
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
