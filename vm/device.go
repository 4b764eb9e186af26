package vm

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
)

// A Device runs a machine's program somewhere other than on the machine's
// own goroutines: a GPU (package cuda). The machine keeps its contract
// (feeds, Value, Get, Set, updates, NaN check, profile) and hands the
// device the work: it copies feeds and parameters to the device, runs the
// program there, and copies values back when they are asked for.
//
// Keeping one Machine type, with the device as an option, keeps one
// implementation of what users rely on (feed checks, error messages,
// restoring parameters after a failed run) whatever runs the program;
// a device implements only memory, copies and kernels.
type Device interface {
	// Load prepares p to run on the device: its memory, kernels and
	// constants. The Executable's slots start undefined but for the
	// constants: the machine writes parameters before the first run.
	Load(p *compile.Program, cfg LoadConfig) (Executable, error)
	// String names the device, for errors and profiles.
	String() string
}

// LoadConfig is what a machine tells its device about the program's
// surroundings.
type LoadConfig struct {
	// Host holds a host tensor for every slot, in its first value's
	// shape: the staging buffers for instructions that run on the host.
	Host []*tensor.Dense
	// RunOnHost runs instruction i on the host, from the host tensors of
	// its inputs to those of its outputs (the device copies them there
	// and back): an op the device has no kernel for.
	RunOnHost func(i int) error
	// Share is the executable whose parameters this one uses for every
	// parameter both programs have (SharingParams), or nil.
	Share Executable
	// SharedParams maps this program's parameter slots to the shared
	// executable's.
	SharedParams map[int]int
}

// An Executable is a program loaded on a device.
type Executable interface {
	// Write copies src into slot's device memory.
	Write(slot int, src *tensor.Dense) error
	// Read copies slot's device memory into dst, after every run before
	// it has finished.
	Read(slot int, dst *tensor.Dense) error
	// Run executes the program's instructions and then its updates. With
	// opts.CheckFinite it stops at the first instruction whose output
	// holds a NaN or infinity and returns a *NonFinite. With opts.Times
	// (one per instruction) it adds each instruction's time to it.
	Run(opts RunOptions) error
	// OnHost reports whether instruction i runs on the host.
	OnHost(i int) bool
	// Close frees the device memory. The executable is unusable after.
	Close() error
}

// RunOptions are what a machine asks of one run on a device.
type RunOptions struct {
	CheckFinite bool
	Times       []time.Duration
}

// NonFinite is a device's report of the first NaN or infinity a run
// produced: instruction Instr's output Output holds Value at Element.
type NonFinite struct {
	Instr, Output, Element int
	Value                  float64
}

func (e *NonFinite) Error() string {
	return fmt.Sprintf("instruction %d: output %d element %d is %v", e.Instr, e.Output, e.Element, e.Value)
}

// Fault is a device's report that instruction Instr's kernel found inputs
// its op's Forward refuses (an index or label out of range): a kernel
// cannot fail, so it marks the run, and the device reports the mark when
// it next waits for its work.
type Fault struct{ Instr int }

func (e *Fault) Error() string {
	return fmt.Sprintf("instruction %d: its kernel found an index or label out of range in its inputs", e.Instr)
}

// OnDevice makes the machine run its program on d (a GPU: see package
// cuda). Parameters live on the device; feeds are copied there on each
// Run, and values are copied back when Value or Get asks for them. A nil
// d (an interface holding a nil pointer included) is an error from New.
func OnDevice(d Device) Option {
	return func(m *Machine) {
		if v := reflect.ValueOf(d); d == nil || v.Kind() == reflect.Pointer && v.IsNil() {
			m.fail(fmt.Errorf("nabla: vm.New: OnDevice: the device is nil (%T): was the error opening it ignored?", d))
			return
		}
		m.device = d
	}
}

// Device is the device the machine runs on, or nil for the CPU.
func (m *Machine) Device() Device {
	if !m.wait() {
		return nil
	}
	defer m.release()
	return m.device
}

// load puts the program on the machine's device, its parameters written
// from the host values New made.
func (m *Machine) load() error {
	cfg := LoadConfig{Host: m.slots, RunOnHost: m.runOnHost}
	if m.shared != nil {
		if m.shared.exe == nil {
			return errors.New("nabla: vm.New: SharingParams with a device: the other machine runs on the CPU")
		}
		cfg.Share, cfg.SharedParams = m.shared.exe, map[int]int{}
		for i, s := range m.prog.Slots() {
			if s.Kind == graph.KindParam {
				if j, ok := m.shared.prog.SlotOf(s.Node); ok {
					cfg.SharedParams[i] = j
				}
			}
		}
	}
	exe, err := m.device.Load(m.prog, cfg)
	if err != nil {
		return fmt.Errorf("nabla: vm.New: %v: %v", m.device, err)
	}
	m.exe = exe
	for i, s := range m.prog.Slots() {
		if s.Kind != graph.KindParam {
			continue
		}
		if _, ok := cfg.SharedParams[i]; ok {
			continue
		}
		if err := exe.Write(i, m.slots[i]); err != nil {
			exe.Close()
			return fmt.Errorf("nabla: vm.New: %v: parameter %v: %v", m.device, s.Node, err)
		}
	}
	m.fresh = make([]bool, len(m.slots))
	m.fed = make([]*tensor.Dense, len(m.prog.Inputs()))
	return nil
}

// runOnHost runs instruction i on the host tensors: the device's fallback
// for an op it has no kernel for. A kernel's error, or its panic, comes
// back as a hostKernelError, which deviceError words as the CPU machine
// does ("kernel panicked: …").
func (m *Machine) runOnHost(i int) (err error) {
	instrs := m.prog.Instructions()
	in := &instrs[i]
	defer func() {
		if r := recover(); r != nil {
			err = &hostKernelError{instr: i, err: fmt.Errorf("kernel panicked: %v", r)}
		}
	}()
	switch {
	case m.kernels[i] != nil:
		err = m.kernels[i](m.execFor(i), m.outs[i][0], m.ins[i])
	case in.Op != nil:
		err = in.Op.Forward(m.outs[i][0], m.ins[i])
	case m.multis[i] != nil:
		err = m.multis[i](m.execFor(i), m.outs[i], m.ins[i])
	default:
		err = in.Multi.Forward(m.outs[i], m.ins[i])
	}
	if err != nil {
		return &hostKernelError{instr: i, err: err}
	}
	return nil
}

// hostKernelError is the error of a kernel a device machine ran on the
// host (a Cholesky of a matrix that is not positive-definite, say).
type hostKernelError struct {
	instr int
	err   error
}

func (e *hostKernelError) Error() string { return fmt.Sprintf("instruction %d: %v", e.instr, e.err) }

// runOnDevice is Run's work on a device: feeds copied up, the program
// run, parameters restored from the host copies after a failed run with
// WithNaNCheck.
func (m *Machine) runOnDevice() error {
	for k, n := range m.prog.Inputs() {
		s, _ := m.prog.SlotOf(n)
		src := m.slots[s]
		if m.fed[k] != nil {
			src, m.fed[k] = m.fed[k], nil
		}
		if err := m.exe.Write(s, src); err != nil {
			return fmt.Errorf("nabla: Run: input %q: %v: %v", n.Name(), m.device, err)
		}
	}
	clear(m.fresh)
	var opts RunOptions
	if m.checkNaN {
		opts.CheckFinite = true
		for i, u := range m.prog.Updates() {
			if m.backups[i] != nil {
				if err := m.exe.Read(u.Slot, m.backups[i]); err != nil {
					return fmt.Errorf("nabla: Run: %v: %v", m.device, err)
				}
			}
		}
	}
	if m.stats != nil {
		if m.times == nil {
			m.times = make([]time.Duration, len(m.stats))
		}
		clear(m.times)
		opts.Times = m.times
	}
	err := m.exe.Run(opts)
	if opts.Times != nil {
		for i, d := range m.times {
			if err == nil || d > 0 {
				m.stats[i].runs++
				m.stats[i].total += d
			}
		}
	}
	if err == nil {
		return nil
	}
	err = m.deviceError("Run", err)
	for i, u := range m.prog.Updates() {
		if m.backups[i] != nil {
			if werr := m.exe.Write(u.Slot, m.backups[i]); werr != nil {
				return fmt.Errorf("%v; restoring parameter %v also failed: %v", err, u.Param, werr)
			}
		}
	}
	return err
}

// fetch brings slot's value from the device to its host tensor, once per
// run.
func (m *Machine) fetch(slot int) error {
	kind := m.prog.Slots()[slot].Kind
	// A parameter is always read: a machine sharing it may have changed it.
	if m.exe == nil || kind == graph.KindConst || (m.fresh[slot] && kind != graph.KindParam) {
		return nil
	}
	if err := m.exe.Read(slot, m.slots[slot]); err != nil {
		return m.deviceError("reading a value", err)
	}
	m.fresh[slot] = true
	return nil
}

// OnHost reports whether the machine runs instruction i on the host: every
// instruction of a CPU machine, and those of a device machine that the
// device has no kernel for. It is false for an i that is not an
// instruction's index.
func (m *Machine) OnHost(i int) bool {
	if !m.wait() {
		return false
	}
	defer m.release()
	switch {
	case i < 0 || i >= len(m.prog.Instructions()):
		return false
	case m.exe == nil:
		return true
	}
	return m.exe.OnHost(i)
}

// leaveDevice brings the parameters back to the host and frees the
// device's memory: the machine goes on on the CPU. Where a parameter
// cannot be read back (the device was closed first), the machine's values
// are lost: it is unusable after.
func (m *Machine) leaveDevice() {
	for i, s := range m.prog.Slots() {
		if s.Kind != graph.KindParam {
			continue
		}
		// A fault of an earlier run comes with the values read.
		var fault *Fault
		if err := m.exe.Read(i, m.slots[i]); err != nil && !errors.As(err, &fault) && m.lost == nil {
			m.lost = fmt.Errorf("nabla: the machine is unusable: its parameters could not be read back from %v when it was closed (%v); were they lost with the device, closed first?", m.device, err)
		}
	}
	m.exe.Close()
	m.exe, m.device = nil, nil
}

// Executable is the program as loaded on the machine's device, or nil on
// the CPU: for a device's own benchmarks and tests.
func (m *Machine) Executable() Executable {
	if !m.wait() {
		return nil
	}
	defer m.release()
	return m.exe
}

// deviceError turns a device's error into one naming the node at fault:
// the first NaN or infinity (WithNaNCheck), or the op whose kernel found
// invalid inputs (a Fault, reported when the device next waits, so
// perhaps after the Run that caused it returned).
func (m *Machine) deviceError(doing string, err error) error {
	instrs := m.prog.Instructions()
	var bad *NonFinite
	var fault *Fault
	var host *hostKernelError
	switch {
	case errors.As(err, &host):
		in := &instrs[host.instr]
		return nodeError(in, in.Node, host.err)
	case errors.As(err, &bad):
		in := &instrs[bad.Instr]
		return nodeError(in, in.Node, fmt.Errorf("output %d element %d is %v (on %v)", bad.Output, bad.Element, bad.Value, m.device))
	case errors.As(err, &fault):
		in := &instrs[fault.Instr]
		return nodeError(in, in.Node, fmt.Errorf("a run on %v failed: an index or label in the op's inputs is out of range (its kernel found it; the op's Forward on the CPU says which)", m.device))
	}
	return fmt.Errorf("nabla: %s: %v: %v", doing, m.device, err)
}
