package vm

import (
	"errors"
	"fmt"
	"maps"
	"sync"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
)

// Runner runs one model for any size of the leading (batch) axis of its
// inputs: the training batch, a partial last batch, a whole test set. A
// graph's shapes are static, so the Runner keeps one program per batch
// size, made the first time that size is fed: it replays the forward
// graph on inputs of that size (graph.Replay), asks the Trainer for the
// training step of those outputs (gradients are built for each size: they
// hold the batch size in their shapes and scales; so are gradients inside
// the forward graph, a loss that reads compile.Grad of an energy, say),
// and compiles. All its machines share the parameters and the optimiser's
// state, so a step made at one size is seen at every other. After its
// first run at a size, a run allocates nothing.
//
// Inputs whose leading dimension is the graph's batch size (that of the
// first input, in node order, fed with a leading dimension) are batched:
// a run feeds them all with one leading size, and the other inputs with
// their built shapes. Ops must not bake the batch size into their
// parameters (Reshape(x, 64, -1) does; Reshape(x, -1, 784) does not):
// such a graph fails at the first run of another size, with an error
// naming the op (a Reshape whose output keeps the built batch as its
// leading axis while its input's follows the batch is refused even where
// the new size would fit it). Nor must operands: a parameter or constant
// shaped by the batch, p (64, 3) in Add(x, p), fails at other sizes, and
// at one row, where x (1, 3) would broadcast against p to 64 rows, with an
// error naming the op that broadcasts (graph.Broadcaster), the shapes and
// its file:line. Both checks look inside the bodies of Scan and While and
// the branches of Cond, traced again at each size, naming the op in the
// body and the lines of the loops holding it.
//
// A Runner, like a Machine, belongs to one goroutine at a time: used from
// a second goroutine during a Run (or a Value), it returns the busy error
// a Machine gives.
type Runner struct {
	guard   sync.Mutex // held during every use, as a Machine's guard
	outputs []*graph.Node
	updates map[*graph.Node]*graph.Node
	train   Trainer
	opts    []Option
	inputs  []*graph.Node // every input the outputs and updates read
	batch   int           // the built batch size
	base    *Machine
	sizes   map[int]*sized
	cur     *sized
}

// compileOptions are the options of the Runner's programs, of updates
// all: compile.WithFixedDraws where the Runner was made WithFixedDraws.
func (r *Runner) compileOptions(all map[*graph.Node]*graph.Node) []compile.Option {
	var probe Machine
	for _, o := range r.opts {
		if o != nil {
			o(&probe)
		}
	}
	if probe.fixedDraws {
		return []compile.Option{compile.WithUpdates(all), compile.WithFixedDraws()}
	}
	return []compile.Option{compile.WithUpdates(all)}
}

// sized is a Runner's program for one batch size.
type sized struct {
	m     *Machine
	nodes map[*graph.Node]*graph.Node // the built graph's nodes → this size's
	feeds Feeds                       // reused from run to run, empty between runs
}

// Trainer builds a training step from a Runner's outputs at one batch
// size, as compile.WithUpdates takes it: typically nn.TrainingUpdates of
// the loss among them. An optimiser may be asked for several steps of one
// model: they share its state.
type Trainer func(outputs []*graph.Node) (map[*graph.Node]*graph.Node, error)

// NewRunner compiles outputs for the batch size the graph was built with.
// updates are forward-side state updates (nn.StateUpdates: BatchNorm's
// running statistics, Dropout's counter), replayed with the outputs; train,
// if not nil, builds the training step at each size. opts apply to every
// machine the Runner makes.
func NewRunner(outputs []*graph.Node, updates map[*graph.Node]*graph.Node, train Trainer, opts ...Option) (*Runner, error) {
	r := &Runner{outputs: outputs, updates: updates, train: train, opts: opts, sizes: map[int]*sized{}}
	all, err := r.steps(outputs, updates, nil, r.batch)
	if err != nil {
		return nil, err
	}
	p, err := compile.Compile(outputs, r.compileOptions(all)...)
	if err != nil {
		return nil, err
	}
	if r.base, err = New(p, opts...); err != nil {
		return nil, err
	}
	r.inputs = p.Inputs()
	for _, n := range r.inputs {
		if n.Type().Rank() > 0 {
			r.batch = n.Shape()[0]
			break
		}
	}
	r.sizes[r.batch] = &sized{m: r.base}
	r.cur = r.sizes[r.batch]
	return r, nil
}

// batched reports whether input n is fed with the batch's leading size.
func (r *Runner) batched(n *graph.Node) bool {
	return n.Type().Rank() > 0 && n.Type().Shape[0] == r.batch
}

// errNilRunner is what a nil or zero-value *Runner reports.
var errNilRunner = errors.New("nabla: the runner is nil or zero: make one with vm.NewRunner")

// acquire takes the runner's guard, or says why it cannot be used now.
// The caller unlocks it.
func (r *Runner) acquire() error {
	if r == nil || r.base == nil {
		return errNilRunner
	}
	if !r.guard.TryLock() {
		return errBusy
	}
	return nil
}

// Run feeds the inputs, runs the program for their batch size (making it
// first, when new) and applies the updates.
func (r *Runner) Run(feeds Feeds) error {
	if err := r.acquire(); err != nil {
		return err
	}
	defer r.guard.Unlock()
	size := -1
	for _, in := range r.inputs {
		v, ok := feeds[in]
		if !ok {
			return fmt.Errorf("nabla: Run: input %q (%v) is not fed", in.Name(), in.Type())
		}
		if v == nil || !r.batched(in) || len(v.Shape()) == 0 {
			continue // Machine.Run says what is wrong
		}
		if n := v.Shape()[0]; size < 0 {
			size = n
		} else if n != size {
			return fmt.Errorf("nabla: Runner.Run: input %v is fed %d rows and another input %d: batched inputs share one leading size", in, n, size)
		}
	}
	if size < 0 {
		size = r.batch
	}
	s, ok := r.sizes[size]
	if !ok {
		var err error
		if s, err = r.make(size); err != nil {
			return err
		}
		r.sizes[size] = s
	}
	r.cur = s
	if s.nodes == nil {
		return s.m.Run(feeds)
	}
	for n, v := range feeds {
		if m, ok := s.nodes[n]; ok {
			n = m
		}
		s.feeds[n] = v
	}
	err := s.m.Run(s.feeds)
	// Hold no user tensor between runs, nor any node fed once: the map
	// keeps its room, so the next run allocates nothing.
	clear(s.feeds)
	return err
}

// make replays the graph on inputs with a leading dimension of size and
// compiles it.
func (r *Runner) make(size int) (*sized, error) {
	if size < 1 {
		return nil, fmt.Errorf("nabla: Runner.Run: batch size %d: need at least one row", size)
	}
	subst := map[*graph.Node]*graph.Node{}
	for _, in := range r.inputs {
		if !r.batched(in) {
			continue
		}
		shape := append([]int{size}, in.Shape()[1:]...)
		subst[in] = in.Graph().Input(in.Name(), in.DType(), shape...)
	}
	roots := append([]*graph.Node(nil), r.outputs...)
	for p, u := range r.updates {
		roots = append(roots, p, u)
	}
	nodes, err := graph.Replay(subst, roots...)
	if err != nil {
		return nil, fmt.Errorf("%w (batch size %d; the graph was built for %d)", err, size, r.batch)
	}
	if err := r.checkBroadcasts(nodes, size); err != nil {
		return nil, err
	}
	at := func(n *graph.Node) *graph.Node {
		if m, ok := nodes[n]; ok {
			return m
		}
		return n
	}
	outputs := make([]*graph.Node, len(r.outputs))
	for i, o := range r.outputs {
		outputs[i] = at(o)
	}
	updates := make(map[*graph.Node]*graph.Node, len(r.updates))
	for p, u := range r.updates {
		updates[p] = at(u)
	}
	all, err := r.steps(outputs, updates, subst, size)
	if err != nil {
		return nil, err
	}
	p, err := compile.Compile(outputs, r.compileOptions(all)...)
	if err != nil {
		return nil, err
	}
	m, err := New(p, append(append([]Option(nil), r.opts...), SharingParams(r.base))...)
	if err != nil {
		return nil, err
	}
	return &sized{m: m, nodes: nodes, feeds: make(Feeds, len(r.inputs))}, nil
}

// steps adds the Trainer's step for outputs to the state updates. At a
// replayed size (subst not nil), what the step reads of the graph as
// built is replayed too: nn.TrainingUpdates includes the modules' own
// updates (BatchNorm's running statistics), built by their Forward on the
// built batch. size is the batch size of the outputs.
func (r *Runner) steps(outputs []*graph.Node, updates, subst map[*graph.Node]*graph.Node, size int) (map[*graph.Node]*graph.Node, error) {
	if r.train == nil {
		return updates, nil
	}
	step, err := r.train(outputs)
	if err != nil {
		return nil, err
	}
	if subst != nil && len(step) > 0 {
		values := make([]*graph.Node, 0, len(step))
		for _, u := range step {
			values = append(values, u)
		}
		nodes, err := graph.Replay(subst, values...)
		if err != nil {
			return nil, err
		}
		if err := r.checkBroadcasts(nodes, size); err != nil {
			return nil, err
		}
		for p, u := range step {
			if m, ok := nodes[u]; ok {
				step[p] = m
			}
		}
	}
	all := maps.Clone(updates)
	if all == nil {
		all = map[*graph.Node]*graph.Node{}
	}
	for p, u := range step {
		if _, ok := all[p]; ok {
			return nil, fmt.Errorf("nabla: Runner: %v is updated both by the state updates and by the training step", p)
		}
		all[p] = u
	}
	return all, nil
}

// Value returns n's value after the last run, n a node of the graph as
// built: an output, an input or a parameter.
func (r *Runner) Value(n *graph.Node) (*tensor.Dense, error) {
	if err := r.acquire(); err != nil {
		return nil, err
	}
	defer r.guard.Unlock()
	if m, ok := r.cur.nodes[n]; ok {
		n = m
	}
	return r.cur.m.Value(n)
}

// Scalar returns a one-element value after the last run (see
// Machine.Scalar).
func (r *Runner) Scalar(n *graph.Node) (float64, error) {
	if err := r.acquire(); err != nil {
		return 0, err
	}
	defer r.guard.Unlock()
	if m, ok := r.cur.nodes[n]; ok {
		n = m
	}
	return r.cur.m.Scalar(n)
}

// Machine is the machine of the batch size the graph was built with; it
// holds the parameters all sizes share (for checkpoints and optimiser
// settings such as SetLR); nil for a nil Runner. It shares the guard of
// every machine the Runner makes: using it during the Runner's Run is the
// busy error.
func (r *Runner) Machine() *Machine {
	if r == nil {
		return nil
	}
	return r.base
}

// Sizes is the number of batch sizes the Runner has programs for. It
// waits for a Run on another goroutine to end.
func (r *Runner) Sizes() int {
	if r == nil {
		return 0
	}
	r.guard.Lock()
	defer r.guard.Unlock()
	return len(r.sizes)
}
