package compile

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// WithFixedDraws lets the program's random ops repeat their draws: draw at
// a step parameter that none of its updates advances, so that every run
// repeats the same draws (for finite differences, which compare runs that
// must see the same noise, and for one-off evaluations); draw in a loop's
// body at a step that does not change from one step of the loop to the
// next; or draw one stream at the same step in two ops. Without it such a
// program is an error, since a forgotten gen.Updates(), or a generator's
// draw inside a loop, would silently repeat the noise.
func WithFixedDraws() Option { return func(c *config) { c.fixedDraws = true } }

// checkDraws returns an error for the random ops (graph.Drawer) that the
// outputs and updates need, in the program's graph and in the subgraphs
// its ops run (graph.SubgraphBinder), when they would repeat their draws:
// first, an op whose step is a parameter that no update advances; then an
// op that a loop's body runs, or reads, at a step that none of the loop's
// carries and sequences changes; then two ops drawing the same stream at
// the same step (ops computing the same values, as a gradient's
// recomputation of a body does, are one draw).
func checkDraws(outputs []*graph.Node, updates [][2]*graph.Node) error {
	d := drawCheck{updated: map[*graph.Node]bool{}, vary: map[*graph.Node]uint64{}, streams: map[drawStream]*graph.Node{}, walked: map[graph.MultiOp]bool{}}
	roots := append([]*graph.Node(nil), outputs...)
	for _, u := range updates {
		d.updated[u[0]] = true
		roots = append(roots, u[1])
	}
	d.walk(&drawLevel{}, roots)
	for _, err := range []error{d.unadvanced, d.inLoop, d.shared} {
		if err != nil {
			return err
		}
	}
	return nil
}

// drawLevel is a graph the check walks: the program's (the top level,
// with no op), or a subgraph that a node of the enclosing level runs.
type drawLevel struct {
	up    *drawLevel
	op    *graph.Node          // the node running the subgraph
	k     int                  // the subgraph's index among op's
	bind  graph.SubgraphBinder // op's op
	index map[*graph.Node]int  // the subgraph's inputs' positions
	depth int                  // 0 at the top
}

// drawStream is a stream drawn at a step: the step is the node it
// resolves to through the subgraphs' inputs that read the same value at
// every run.
type drawStream struct {
	seed uint64
	id   uint32
	step *graph.Node
}

// drawCheck walks the graphs, recording the first error of each kind.
type drawCheck struct {
	updated map[*graph.Node]bool
	// vary holds, for each node seen, a bit per level (by depth) at whose
	// every run of the subgraph it may take a new value.
	vary                       map[*graph.Node]uint64
	streams                    map[drawStream]*graph.Node // the first draw of each
	walked                     map[graph.MultiOp]bool     // the ops whose subgraphs are walked
	unadvanced, inLoop, shared error
}

// walk visits the nodes of lv's graph that roots need, and the subgraphs
// their ops run, each node's inputs before it.
func (d *drawCheck) walk(lv *drawLevel, roots []*graph.Node) {
	type frame struct {
		n    *graph.Node
		done bool
	}
	stack := make([]frame, 0, len(roots))
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, frame{n: roots[i]})
	}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if f.n == nil {
			continue
		}
		if _, ok := d.vary[f.n]; ok {
			continue
		}
		in := f.n.Inputs()
		if !f.done {
			stack = append(stack, frame{n: f.n, done: true})
			for i := len(in) - 1; i >= 0; i-- {
				if _, ok := d.vary[in[i]]; !ok {
					stack = append(stack, frame{n: in[i]})
				}
			}
			continue
		}
		d.visit(lv, f.n, in)
	}
}

// visit records n's variation, once its inputs' are known, checks it if
// it is a random op, and walks the subgraphs it runs.
func (d *drawCheck) visit(lv *drawLevel, n *graph.Node, in []*graph.Node) {
	var v uint64
	if n.Kind() == graph.KindInput && lv.op != nil {
		if i, ok := lv.index[n]; ok {
			if j, perRun := lv.bind.SubgraphInput(lv.k, i); j >= 0 && j < len(lv.op.Inputs()) {
				v = d.vary[lv.op.Inputs()[j]]
				if perRun {
					v |= 1 << lv.depth
				}
			}
		}
	}
	for _, x := range in {
		v |= d.vary[x]
	}
	d.vary[n] = v
	if n.Kind() != graph.KindOp {
		return
	}
	if dr, ok := n.Op().(graph.Drawer); ok {
		d.draw(lv, n, dr)
	}
	m, _ := n.MultiOp()
	b, ok := m.(graph.SubgraphBinder)
	if !ok || lv.depth >= 63 || d.walked[m] {
		return
	}
	d.walked[m] = true
	for k, sub := range b.Subgraphs() {
		if sub == nil {
			continue
		}
		if runs := b.SubgraphRuns(k); runs > 1 && d.inLoop == nil {
			for _, h := range b.HoistedDraws(k) {
				d.inLoop = loopError(h, n, runs)
				break
			}
		}
		index := make(map[*graph.Node]int, len(sub.Inputs))
		for i, x := range sub.Inputs {
			index[x] = i
		}
		d.walk(&drawLevel{up: lv, op: n, k: k, bind: b, index: index, depth: lv.depth + 1}, sub.Outputs)
	}
}

// draw checks the random op n of level lv.
func (d *drawCheck) draw(lv *drawLevel, n *graph.Node, dr graph.Drawer) {
	in := n.Inputs()
	i := dr.DrawStep()
	if i < 0 || i >= len(in) {
		return
	}
	step := in[i]
	v := d.vary[step]
	for l := lv; l.op != nil && d.inLoop == nil; l = l.up {
		if runs := l.bind.SubgraphRuns(l.k); runs > 1 && v&(1<<l.depth) == 0 {
			d.inLoop = loopError(n, l.op, runs)
		}
	}
	// The node the step reads: through the subgraphs' inputs that hold
	// the same value at every run of theirs.
	for l := lv; l.op != nil && step.Kind() == graph.KindInput; l = l.up {
		k, ok := l.index[step]
		if !ok {
			break
		}
		j, perRun := l.bind.SubgraphInput(l.k, k)
		if perRun || j < 0 || j >= len(l.op.Inputs()) {
			break
		}
		step = l.op.Inputs()[j]
	}
	if step.Kind() == graph.KindParam && !d.updated[step] && d.unadvanced == nil {
		d.unadvanced = fmt.Errorf("nabla: Compile: %v built at %s draws at step %q, a parameter that no update of the program advances, so every run would repeat its draws: pass gen.Updates() (a model's: nn.TrainingUpdates or nn.StateUpdates) to compile.WithUpdates, or compile.WithFixedDraws() to repeat the same draws on purpose",
			n, n.Site(), step.Name())
	}
	seed, id := dr.DrawStream()
	key := drawStream{seed, id, step}
	first, ok := d.streams[key]
	if !ok {
		d.streams[key] = n
		return
	}
	if d.shared == nil && !sameDraw(first, n) {
		d.shared = fmt.Errorf("nabla: Compile: %v built at %s and %v built at %s draw stream %d of seed %d at the same step, so they repeat each other's bits: give each its own stream (a Generator does), or compile.WithFixedDraws() to allow it",
			n, n.Site(), first, first.Site(), id, seed)
	}
}

// sameDraw reports whether two random ops of one stream and step draw the
// same values: the same op (by its key) and type.
func sameDraw(a, b *graph.Node) bool {
	if !a.Type().Equal(b.Type()) || a.Op().Name() != b.Op().Name() {
		return false
	}
	ka, okA := a.Op().(graph.Keyer)
	kb, okB := b.Op().(graph.Keyer)
	return okA && okB && ka.Key() == kb.Key()
}

// loopError is the error for the random op n, which every run of the body
// of loop (a node running it runs times) draws at the same step.
func loopError(n, loop *graph.Node, runs int) error {
	return fmt.Errorf("nabla: Compile: %v built at %s draws at the same step and stream at each of the %d steps of the %s built at %s, so every step repeats its draws: draw the noise outside the loop, with a leading axis of the steps, and pass it as a sequence, or draw at a step computed from a carry (or compile.WithFixedDraws() to repeat them on purpose)",
		n, n.Site(), runs, loop.BuilderName(), loop.Site())
}
