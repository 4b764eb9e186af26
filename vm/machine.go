package vm

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/parallel"
)

// Feeds maps input nodes to the values they take in one run.
type Feeds map[*graph.Node]*tensor.Dense

// Machine runs one program. It owns the program's buffers and parameter
// values. A Machine is for one goroutine at a time; the Program it runs
// may be shared. Each method holds the machine for the whole of its
// work: a call from a second goroutine meanwhile returns an error saying
// the machine is running on another goroutine (the methods that return
// no error, such as Close and Profile, wait instead), so no call ever
// sees another's half-written values.
type Machine struct {
	prog     *compile.Program
	slots    []*tensor.Dense               // each slot's storage, in its first value's shape
	views    map[view]*tensor.Dense        // a slot's storage seen in another shape
	values   map[*graph.Node]*tensor.Dense // what Value returns
	ins      [][]*tensor.Dense             // each instruction's inputs
	outs     [][]*tensor.Dense             // each instruction's outputs
	staging  []*tensor.Dense               // per update: a copy of its value when it reads a parameter another update writes
	backups  []*tensor.Dense               // per update computed in place, with WithNaNCheck: the parameter before the run
	checkNaN bool
	shared   *Machine
	stats    []instrStats // per instruction, when profiling
	threads  int          // asked for by WithThreads; 0: GOMAXPROCS, at most NumCPU
	memLimit int64        // asked for by WithMemoryLimit; 0: graph.MemoryLimit
	pool     *parallel.Pool
	exec     *graph.Exec      // lent to kernels that implement graph.ExecForwarder
	bodies   [][]*Machine     // per instruction: machines for the subgraphs its op runs
	execs    []*graph.Exec    // per instruction running subgraphs: exec with their runners
	inherit  *parallel.Pool   // a body machine's enclosing machine's pool
	runner   *bodyRunner      // a body machine's runner
	kernels  []execForwarder  // per instruction: the op's ForwardExec, or nil
	multis   []multiForwarder // per instruction: a multi-output op's ForwardExec, or nil
	empty    []bool           // per instruction: every output has no elements
	guard    *guard           // held during every use, to catch use from another goroutine
	lost     error            // why the machine is unusable: its parameters were lost with its device
	optErr   error            // the first option's error, which New returns
	ran      bool             // a Run has completed
	device   Device           // where the program runs (OnDevice), or nil
	exe      Executable       // the program loaded on device
	fresh    []bool           // per slot, on a device: the host tensor holds the last run's value
	fed      []*tensor.Dense  // per input, on a device: the caller's tensor to write up, or nil (the slot's)
	times    []time.Duration  // per instruction, on a device with profiling: one run's times

	// fixedDraws is WithFixedDraws, which a Runner reads.
	fixedDraws bool
}

// execForwarder is graph.ExecForwarder's method, looked up once per
// instruction.
type execForwarder = func(*graph.Exec, *tensor.Dense, []*tensor.Dense) error

// multiForwarder is graph.MultiExecForwarder's method.
type multiForwarder = func(*graph.Exec, []*tensor.Dense, []*tensor.Dense) error

// view names a slot's storage seen in one shape.
type view struct {
	slot  int
	shape string
}

// Option configures New.
type Option func(*Machine)

// SharingParams makes the new machine use other's parameter values for
// every parameter both programs have (an evaluation program beside a
// training one, say): an update by either is seen by both. Since they
// read and write the same buffers, the machines are used one at a time:
// while one runs (or is read or written), using another from a second
// goroutine is the busy error a Machine used during its own Run gives.
func SharingParams(other *Machine) Option {
	return func(m *Machine) {
		if other == nil || other.prog == nil {
			m.fail(errors.New("nabla: vm.New: SharingParams: the other machine is nil or zero: make it with vm.New"))
			return
		}
		m.shared = other
	}
}

// fail records an option's error, for New to return (the first one).
func (m *Machine) fail(err error) {
	if m.optErr == nil {
		m.optErr = err
	}
}

// WithNaNCheck makes Run check every instruction's outputs and fail at the
// first NaN or infinity, naming the node that produced it. A failed Run
// then leaves the parameters as they were before it (the machine keeps a
// copy of those the program updates in place).
func WithNaNCheck() Option { return func(m *Machine) { m.checkNaN = true } }

// WithFixedDraws lets a Runner's programs draw at step parameters that
// none of their updates advances, so that every run repeats the same draws
// (see compile.WithFixedDraws); a Machine, given a compiled program, has
// no use for it.
func WithFixedDraws() Option { return func(m *Machine) { m.fixedDraws = true } }

// WithThreads sets the number of goroutines the machine's kernels may use
// at once, its own included: 1 runs everything on the goroutine that calls
// Run. The default is runtime.GOMAXPROCS(0) when the machine is made, at
// most runtime.NumCPU(), the cpus the process may run on: a GOMAXPROCS
// above them (dist.Init sets 2 on a rank bound to one core) adds threads
// that would only take turns on the same cores.
// Matrix products and large elementwise ops split their work over them;
// their results do not depend on the number of threads.
func WithThreads(n int) Option { return func(m *Machine) { m.threads = n } }

// WithMemoryLimit bounds the bytes of the buffers New allocates for the
// machine (graph.MemoryLimit by default): a program that needs more is an
// error from New, naming its largest value, before anything is allocated.
func WithMemoryLimit(bytes int64) Option { return func(m *Machine) { m.memLimit = bytes } }

// New allocates a machine for p: a buffer for every slot, parameters set to
// their initial values (or shared, see SharingParams). Values sharing a
// slot share its buffer, each through a tensor of its own shape made here,
// so that Run allocates nothing.
func New(p *compile.Program, opts ...Option) (*Machine, error) {
	if p == nil {
		return nil, fmt.Errorf("nabla: vm.New: program is nil")
	}
	m := &Machine{prog: p, views: map[view]*tensor.Dense{}, values: map[*graph.Node]*tensor.Dense{}}
	for _, o := range opts {
		if o != nil { // a nil option is no option
			o(m)
		}
	}
	if m.optErr != nil {
		return nil, m.optErr
	}
	m.guard = &guard{}
	if m.shared != nil {
		// The machines share buffers, hence one guard; the other
		// machine's is held while this one is made from its buffers.
		if err := m.shared.acquire(); err != nil {
			return nil, fmt.Errorf("nabla: vm.New: SharingParams: the other machine cannot be used: %v", err)
		}
		defer m.shared.release()
		m.guard = m.shared.guard
	}
	if m.shared != nil && m.shared.prog.Graph() != p.Graph() {
		return nil, fmt.Errorf("nabla: vm.New: SharingParams: the other machine's program was compiled from another graph")
	}
	if m.shared != nil && m.shared.exe != nil && m.device == nil {
		return nil, fmt.Errorf("nabla: vm.New: SharingParams: the other machine runs on %v; make this one with vm.OnDevice too", m.shared.device)
	}
	if err := m.checkMemory(); err != nil {
		return nil, err
	}
	if m.threads < 1 {
		m.threads = min(runtime.GOMAXPROCS(0), runtime.NumCPU())
	}
	switch {
	case m.inherit != nil:
		m.pool = m.inherit
	case m.threads > 1:
		m.pool = parallel.New(m.threads)
		// The workers hold the pool, not the machine: once the machine
		// is unreachable, its workers stop.
		runtime.AddCleanup(m, (*parallel.Pool).Close, m.pool)
	}
	m.exec = graph.NewExec(workers(m.pool))
	m.slots = make([]*tensor.Dense, len(p.Slots()))
	for i, s := range p.Slots() {
		switch s.Kind {
		case graph.KindConst:
			m.slots[i] = s.Const
		case graph.KindParam:
			if m.shared != nil {
				if j, ok := m.shared.prog.SlotOf(s.Node); ok {
					m.slots[i] = m.shared.slots[j]
					continue
				}
			}
			v, err := graph.CloneDense(s.Node.Value())
			if err != nil {
				return nil, fmt.Errorf("nabla: vm.New: parameter %v: %v", s.Node, err)
			}
			m.slots[i] = v
		default:
			m.slots[i] = graph.NewDenseOf(s.Type)
		}
	}
	for _, in := range p.Instructions() {
		m.ins = append(m.ins, m.pick(in.In, in.InTypes))
		m.outs = append(m.outs, m.pick(in.Out, in.OutTypes))
		var k execForwarder
		if f, ok := in.Op.(graph.ExecForwarder); ok {
			k = f.ForwardExec
		}
		m.kernels = append(m.kernels, k)
		var mk multiForwarder
		if f, ok := in.Multi.(graph.MultiExecForwarder); ok {
			mk = f.ForwardExec
		}
		m.multis = append(m.multis, mk)
		m.empty = append(m.empty, graph.AllEmpty(in.OutTypes))
	}
	if err := m.newBodies(); err != nil {
		return nil, err
	}
	for _, nodes := range [][]*graph.Node{p.Outputs(), p.Inputs(), p.Params()} {
		for _, n := range nodes {
			s, _ := p.SlotOf(n)
			v := m.view(s, n.Shape())
			if p.Slots()[s].Kind == graph.KindConst {
				// The program's own tensor: hand out a copy, so that no
				// user's write can reach the program.
				v, _ = graph.CloneDense(v)
			}
			m.values[n] = v
		}
	}
	if m.device != nil {
		if err := m.load(); err != nil {
			return nil, err
		}
	}
	updated := map[int]bool{} // slots update writes after the run
	for _, u := range p.Updates() {
		if u.From != u.Slot {
			updated[u.Slot] = true
		}
	}
	m.staging = make([]*tensor.Dense, len(p.Updates()))
	m.backups = make([]*tensor.Dense, len(p.Updates()))
	for i, u := range p.Updates() {
		if updated[u.From] {
			m.staging[i] = graph.NewDenseOf(p.Slots()[u.From].Type)
		}
		if u.From == u.Slot && m.checkNaN {
			m.backups[i] = graph.NewDenseOf(p.Slots()[u.Slot].Type)
		}
	}
	return m, nil
}

func (m *Machine) pick(slots []int, types []graph.Type) []*tensor.Dense {
	out := make([]*tensor.Dense, len(slots))
	for i, s := range slots {
		out[i] = m.view(s, types[i].Shape)
	}
	return out
}

// view returns slot's storage as a tensor of the given shape, made once.
func (m *Machine) view(slot int, shape []int) *tensor.Dense {
	base := m.slots[slot]
	if slices.Equal([]int(base.Shape()), shape) {
		return base
	}
	k := view{slot, graph.ShapeString(shape)}
	t, ok := m.views[k]
	if !ok {
		t = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(graph.Backing(base)))
		m.views[k] = t
	}
	return t
}

// workers is the pool as graph.Workers: nil (serial) when there is none.
func workers(p *parallel.Pool) graph.Workers {
	if p == nil {
		return nil
	}
	return p
}

// Threads is the number of goroutines the machine's kernels use at once.
func (m *Machine) Threads() int {
	if !m.wait() {
		return 0
	}
	defer m.release()
	return m.exec.Threads()
}

// Close stops the machine's worker goroutines and frees its device memory.
// It is optional: they stop by themselves once the machine is no longer
// reachable. A closed machine runs serially, on the CPU, from the values
// its parameters had on the device (where these cannot be read back, its
// device closed before it, say, its methods return an error saying so).
// Close waits for a use of the machine on another goroutine to end.
func (m *Machine) Close() {
	if !m.wait() {
		return
	}
	defer m.release()
	if m.exe != nil {
		m.leaveDevice()
	}
	if m.pool == nil {
		return
	}
	m.pool.Close()
	m.pool, m.exec = nil, graph.NewExec(nil)
	m.serialBodies()
}

// Program returns the program the machine runs (nil for a nil machine).
func (m *Machine) Program() *compile.Program {
	if m == nil {
		return nil
	}
	return m.prog
}

// Run feeds the inputs, executes every instruction and then applies the
// program's parameter updates. Feeds are copied in; the fed tensors are
// not modified. After the first run, Run allocates nothing.
//
// An update the compiler computes in its parameter's own buffer is written
// by its instruction, once nothing left to run reads the old value, so a
// Run that fails part-way may leave such parameters updated; with
// WithNaNCheck, a failed Run leaves every parameter as it was.
func (m *Machine) Run(feeds Feeds) error {
	if err := m.acquire(); err != nil {
		return err
	}
	defer m.release()
	if err := m.feed(feeds); err != nil {
		return err
	}
	if m.checkNaN && !m.ran {
		if err := m.checkFolded(); err != nil {
			return err
		}
	}
	if m.exe != nil {
		if err := m.runOnDevice(); err != nil {
			return err
		}
		m.ran = true
		return nil
	}
	m.backUp()
	if err := m.execute(); err != nil {
		m.restore()
		return err
	}
	m.update()
	m.ran = true
	return nil
}

func (m *Machine) feed(feeds Feeds) error {
	g := m.prog.Graph()
	for n, t := range feeds {
		switch {
		case n == nil:
			return feedError("feed for a nil node")
		case n.Graph() != g:
			return feedError("fed node %v belongs to another graph", n)
		case n.Kind() != graph.KindInput:
			return feedError("fed node %v is not an input", n)
		case t == nil:
			return feedError("input %q is fed a nil tensor", n.Name())
		}
	}
	clear(m.fed)
	for k, n := range m.prog.Inputs() {
		t, ok := feeds[n]
		if !ok {
			return feedError("input %q (%v) is not fed", n.Name(), n.Type())
		}
		if err := checkValue(t, n.Type()); err != nil {
			return feedError("input %q: %v", n.Name(), err)
		}
		if m.fed != nil && !t.IsView() {
			m.fed[k] = t // a device's machine writes it up as it is
			continue
		}
		s, _ := m.prog.SlotOf(n)
		copyData(m.slots[s], t)
	}
	return nil
}

// feedError is a feed's error, naming the caller's file:line as build
// errors do.
func feedError(format string, args ...any) error {
	msg := "nabla: Run: " + fmt.Sprintf(format, args...)
	if site := graph.CallerSite(); site != "" {
		msg += " at " + site
	}
	return errors.New(msg)
}

// checkValue says why a tensor cannot stand for a value of type want.
func checkValue(t *tensor.Dense, want graph.Type) error {
	if t.Dtype().Type == nil || t.Shape() == nil {
		return fmt.Errorf("the tensor is empty (a zero tensor.Dense), want %v", want)
	}
	if t.Dtype() != want.DType {
		return dtypeMismatch(t.Dtype(), want.DType)
	}
	if !slices.Equal([]int(t.Shape()), want.Shape) {
		return fmt.Errorf("shape %s, want %s", graph.ShapeString(t.Shape()), graph.ShapeString(want.Shape))
	}
	if t.RequiresIterator() && want.Size() > 0 { // gorgonia says so of every empty tensor
		return fmt.Errorf("tensor is a non-contiguous view; materialise it first")
	}
	return nil
}

func copyData(dst, src *tensor.Dense) { graph.CopyValues(dst, src) }

// execute runs the instructions, turning a kernel's error or panic into an
// error naming the node, its op and where it was built.
func (m *Machine) execute() (err error) {
	instrs := m.prog.Instructions()
	i := 0
	var clock stopwatch
	if m.stats != nil {
		clock.start = time.Now()
	}
	defer func() {
		if r := recover(); r != nil {
			err = instrError(&instrs[i], fmt.Errorf("kernel panicked: %v", r))
		}
	}()
	for ; i < len(instrs); i++ {
		if m.empty[i] {
			// Nothing to write; a kernel could still loop over the
			// outer dimensions of a shape like (1<<40, 0).
			continue
		}
		in := &instrs[i]
		var kerr error
		switch {
		case m.kernels[i] != nil:
			kerr = m.kernels[i](m.execFor(i), m.outs[i][0], m.ins[i])
		case in.Op != nil:
			kerr = in.Op.Forward(m.outs[i][0], m.ins[i])
		case m.multis[i] != nil:
			kerr = m.multis[i](m.execFor(i), m.outs[i], m.ins[i])
		default:
			kerr = in.Multi.Forward(m.outs[i], m.ins[i])
		}
		if kerr != nil {
			return instrError(in, kerr)
		}
		if m.checkNaN {
			if err := checkFinite(in, m.ins[i], m.outs[i]); err != nil {
				return err
			}
		}
		if m.stats != nil {
			m.stats[i].runs++
			m.stats[i].total += clock.lap()
		}
	}
	return nil
}

func instrError(in *compile.Instruction, err error) error {
	return nodeError(in, in.Node, err)
}

// nodeError names node n, which instruction in computes, and where it was
// built. A fused instruction computes several nodes: the message names
// the fused op too, and the nodes it fuses when n is its last.
func nodeError(in *compile.Instruction, n *graph.Node, err error) error {
	msg := fmt.Sprintf("nabla: %s (node %v", in.Name(), n)
	if fused := in.Absorbed(); len(fused) > 0 {
		msg = fmt.Sprintf("nabla: %s (node %v, in %s", n.OpName(), n, in.Name())
		if n == in.Node {
			msg += ", which fuses " + nodeSites(fused)
		}
	}
	msg += fmt.Sprintf("): %v", err)
	return withSite(msg, n)
}

// withSite adds to msg where n was built.
func withSite(msg string, n *graph.Node) error {
	if site := n.Site(); site != "" {
		msg += " (built at " + site + ")"
	}
	return errors.New(msg)
}

// nodeSites lists nodes with the sites they were built at: the first few
// of a long list, and how many more.
func nodeSites(nodes []*graph.Node) string {
	const shown = 8
	var b strings.Builder
	for i, n := range nodes[:min(len(nodes), shown)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n.String())
		if site := n.Site(); site != "" {
			b.WriteString(" at " + site)
		}
	}
	if len(nodes) > shown {
		fmt.Fprintf(&b, " and %d more", len(nodes)-shown)
	}
	return b.String()
}

// checkFinite fails at the first NaN or infinite output element, naming
// the node that made it: for a fused instruction, the first of its nodes
// whose value there is bad.
func checkFinite(in *compile.Instruction, ins, outs []*tensor.Dense) error {
	for _, t := range outs {
		if j, v := firstNonFinite(t); j >= 0 {
			return nodeError(in, in.Culprit(ins, j), fmt.Errorf("output element %d is %v", j, v))
		}
	}
	return nil
}

// firstNonFinite is the index and value of t's first NaN or infinity, or
// -1; integers are always finite.
func firstNonFinite(t *tensor.Dense) (int, float64) {
	if !graph.IsFloat(t.Dtype()) {
		return -1, 0
	}
	n := graph.ShapeSize(t.Shape()) // DataSize is 0 for a scalar
	for j := 0; j < n; j++ {
		if v := graph.Float(t, j); math.IsNaN(v) || math.IsInf(v, 0) {
			return j, v
		}
	}
	return -1, 0
}

// checkFolded blames a NaN or infinity that the compiler computed, folding
// an op over constants, on that op rather than on the value's consumer.
func (m *Machine) checkFolded() error {
	for _, s := range m.prog.Slots() {
		if s.Kind != graph.KindConst || s.Node == nil || s.Node.Kind() != graph.KindOp {
			continue // not folded: a constant of the user's
		}
		if j, v := firstNonFinite(s.Const); j >= 0 {
			return withSite(fmt.Sprintf("nabla: %s (node %v): output element %d is %v (computed at compile time, from constants)",
				s.Node.OpName(), s.Node, j, v), s.Node)
		}
	}
	return nil
}

// update writes the parameter updates, all from values computed before any
// is written. An update computed in its parameter's slot (From is Slot)
// was written by its instruction, after every read of the old value.
func (m *Machine) update() {
	ups := m.prog.Updates()
	for i, u := range ups {
		if m.staging[i] != nil {
			copyData(m.staging[i], m.slots[u.From])
		}
	}
	for i, u := range ups {
		src := m.slots[u.From]
		if m.staging[i] != nil {
			src = m.staging[i]
		}
		if u.From != u.Slot {
			copyData(m.slots[u.Slot], src)
		}
	}
}

// backUp copies the parameters that updates computed in place will
// overwrite, where the machine keeps backups (WithNaNCheck).
func (m *Machine) backUp() {
	for i, u := range m.prog.Updates() {
		if m.backups[i] != nil {
			copyData(m.backups[i], m.slots[u.Slot])
		}
	}
}

// restore puts back the parameters backUp copied, after a failed run.
func (m *Machine) restore() {
	for i, u := range m.prog.Updates() {
		if m.backups[i] != nil {
			copyData(m.slots[u.Slot], m.backups[i])
		}
	}
}
