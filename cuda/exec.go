package cuda

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// executable is a program loaded on a device (vm.Executable): its plan,
// a device buffer per plan buffer, the compiled kernels, and the
// argument words of every launch, filled at load so that a run allocates
// nothing.
type executable struct {
	dev   *Device
	prog  *compile.Program
	plan  *plan
	cfg   vm.LoadConfig
	bufs  []ptr  // per plan buffer
	owned []bool // per plan buffer: allocated here (not shared)
	funcs []function
	args  [][]uint64    // per step: a launch's arguments
	gemms []gemmCall    // per step: a product's call, its pointers set
	libs  []libraryArgs // per step: a library call's addresses
	// watches are the watched library steps' (nil for the others), and
	// watched the same, listed (watch.go).
	watches []*watch
	watched []*watch
	checked []int // the library steps whose call has a Check
	// broken is a watched library call's failure (its library ended its
	// work): every later run, read and write fails with it.
	broken error
	replay func() error
	// captureErr is why the runs after the first do not replay a CUDA
	// graph, though they would (see gpuBackend.record).
	captureErr error
	// parent is the executable whose parameters this one shares, and
	// sharers how many share this one's: its buffers outlive its release
	// until they are all released.
	parent  *executable
	sharers int
	// faultDev and fault are the fault word kernels write (FAULT) and the
	// host reads: the site of an instruction whose inputs were invalid.
	faultDev ptr
	fault    *int64
	ran      bool // a run has completed
	closed   bool
}

func (d *Device) load(p *compile.Program, cfg vm.LoadConfig) (*executable, error) {
	pl, err := newPlanOn(p, d.be.libraries())
	if err != nil {
		return nil, err
	}
	e := &executable{dev: d, prog: p, plan: pl, cfg: cfg}
	if err := e.allocate(); err != nil {
		e.release()
		return nil, err
	}
	if err := e.compile(); err != nil {
		e.release()
		return nil, err
	}
	e.bind()
	return e, nil
}

// allocate makes the device buffers, shares parameters, and uploads the
// constants.
func (e *executable) allocate() error {
	be := e.dev.be
	var share *executable
	if e.cfg.Share != nil {
		s, ok := e.cfg.Share.(*executable)
		if !ok || s.dev != e.dev {
			return errors.New("SharingParams: the other machine runs on another device")
		}
		share = s
		e.parent = s
		s.sharers++
	}
	e.bufs = make([]ptr, len(e.plan.buffers))
	e.owned = make([]bool, len(e.plan.buffers))
	for i, t := range e.plan.buffers {
		if j, ok := e.cfg.SharedParams[i]; ok && share != nil {
			e.bufs[i] = share.bufs[j]
			continue
		}
		p, err := be.alloc(bytesOf(t))
		if err != nil {
			return err
		}
		e.bufs[i], e.owned[i] = p, true
	}
	dev, host, err := be.mapped(8)
	if err != nil {
		return err
	}
	e.faultDev, e.fault = dev, (*int64)(host)
	for i, c := range e.plan.consts {
		if err := e.write(i, c); err != nil {
			return err
		}
	}
	return nil
}

// bytesOf is the size of a value of type t.
func bytesOf(t graph.Type) int64 { return int64(t.Size()) * int64(t.DType.Size()) }

// compile builds the plan's kernels, one module per floating-point type.
func (e *executable) compile() error {
	e.funcs = make([]function, len(e.plan.kernels))
	for _, f32 := range []bool{false, true} {
		var defs []kernelDef
		var idx []int
		for k, d := range e.plan.kernels {
			if e.plan.f32[k] == f32 {
				defs, idx = append(defs, d), append(idx, k)
			}
		}
		if len(defs) == 0 {
			continue
		}
		m, err := e.dev.module(moduleSource(f32, defs))
		if err != nil {
			return err
		}
		for j, d := range defs {
			f, err := m.function(d.name)
			if err != nil {
				return err
			}
			e.funcs[idx[j]] = f
		}
	}
	return nil
}

// bind fills every launch's argument words (its buffers' addresses and
// its item count) and every product's pointers.
func (e *executable) bind() {
	e.args = make([][]uint64, len(e.plan.steps))
	e.gemms = make([]gemmCall, len(e.plan.steps))
	e.libs = make([]libraryArgs, len(e.plan.steps))
	e.bindWatches()
	for i, s := range e.plan.steps {
		if s.kind == stepLibrary {
			e.libs[i] = e.bindLibrary(s)
			if e.plan.calls[s.lib].Check != nil {
				e.checked = append(e.checked, i)
			}
		}
		if s.kind == stepGemm {
			g := s.gemm
			g.a, g.b, g.c = e.addr(s.args[0]), e.addr(s.args[1]), e.addr(s.args[2])
			e.gemms[i] = g
		}
		if s.kind != stepKernel {
			continue
		}
		a := make([]uint64, 0, len(s.args)+3)
		for _, r := range s.args {
			a = append(a, uint64(e.addr(r)))
		}
		e.args[i] = append(a, uint64(e.faultDev), uint64(s.instr+1), uint64(s.n))
	}
}

// addr is a ref's device address.
func (e *executable) addr(r ref) ptr { return e.bufs[r.buf] + ptr(r.off) }

// Write copies src into slot's device memory.
func (e *executable) Write(slot int, src *tensor.Dense) error {
	e.dev.mu.Lock()
	defer e.dev.mu.Unlock()
	if err := e.usable(); err != nil {
		return err
	}
	return e.write(slot, src)
}

func (e *executable) write(buf int, src *tensor.Dense) error {
	n := bytesOf(e.plan.buffers[buf])
	if n == 0 {
		return nil
	}
	if got := int64(graph.ShapeSize(src.Shape())) * int64(src.Dtype().Size()); got != n || src.Dtype() != e.plan.buffers[buf].DType {
		return fmt.Errorf("writing a %v%v into a buffer of %v", src.Dtype(), src.Shape(), e.plan.buffers[buf])
	}
	return e.dev.be.upload(e.bufs[buf], dataOf(src), n)
}

// Read copies slot's device memory into dst.
func (e *executable) Read(slot int, dst *tensor.Dense) error {
	e.dev.mu.Lock()
	defer e.dev.mu.Unlock()
	if err := e.usable(); err != nil {
		return err
	}
	if err := e.read(slot, dst); err != nil {
		return err
	}
	return e.checkFault() // the download waited for the work
}

// checkFault reports, and clears, an instruction's FAULT() in the work
// done so far (all of it after a sync; some of it otherwise).
func (e *executable) checkFault() error {
	if site := atomic.LoadInt64(e.fault); site != 0 {
		atomic.StoreInt64(e.fault, 0)
		return &vm.Fault{Instr: int(site - 1)}
	}
	return nil
}

func (e *executable) read(buf int, dst *tensor.Dense) error {
	n := bytesOf(e.plan.buffers[buf])
	if n == 0 {
		return nil
	}
	if got := int64(graph.ShapeSize(dst.Shape())) * int64(dst.Dtype().Size()); got != n || dst.Dtype() != e.plan.buffers[buf].DType {
		return fmt.Errorf("reading a buffer of %v into a %v%v", e.plan.buffers[buf], dst.Dtype(), dst.Shape())
	}
	return e.dev.be.download(dataOf(dst), e.bufs[buf], n)
}

// dataOf is the address of a tensor's first element (nil for a dtype the
// machines do not use). It does not box the backing slice: runs allocate
// nothing.
func dataOf(t *tensor.Dense) unsafe.Pointer {
	switch t.Dtype() {
	case graph.Float32:
		return unsafe.Pointer(unsafe.SliceData(t.Float32s()))
	case graph.Float64:
		return unsafe.Pointer(unsafe.SliceData(t.Float64s()))
	case graph.Int32:
		return unsafe.Pointer(unsafe.SliceData(t.Int32s()))
	case graph.Int64:
		return unsafe.Pointer(unsafe.SliceData(t.Int64s()))
	}
	return nil
}

var errUnloaded = errors.New("the program was unloaded (the machine is closed)")

// usable says why the executable cannot be used, the device's lock held:
// it, or its device, is closed, or a watched library call failed.
func (e *executable) usable() error {
	switch {
	case e.closed:
		return errUnloaded
	case e.dev.closed:
		return errDeviceClosed
	}
	return e.broken
}

// OnHost reports whether instruction i runs on the host.
func (e *executable) OnHost(i int) bool { return e.plan.onHost[i] }

// Run executes the plan: replaying what the first run recorded when it
// can, else step by step, instructions without a kernel on the host.
func (e *executable) Run(opts vm.RunOptions) error {
	e.dev.mu.Lock()
	defer e.dev.mu.Unlock()
	if err := e.usable(); err != nil {
		return err
	}
	if err := e.checkFault(); err != nil { // of a run before, seen now
		return err
	}
	if err := e.checkLibraries(); err != nil {
		return err
	}
	fast := !opts.CheckFinite && opts.Times == nil
	if fast && e.replay != nil {
		for _, w := range e.watched {
			e.dev.be.watch(w)
		}
		return e.replay()
	}
	if err := e.runSteps(opts); err != nil {
		return err
	}
	if err := e.checkFault(); err != nil {
		return err
	}
	if fast && !e.ran && !hasHost(e.plan) {
		replay, err := e.dev.be.record(e.queueAll)
		if err != nil {
			return err
		}
		e.replay = replay
		if b, ok := e.dev.be.(*gpuBackend); ok {
			e.captureErr = b.captureErr
		}
	}
	e.ran = true
	return nil
}

// hasHost reports whether some instruction runs on the host.
func hasHost(p *plan) bool {
	for _, h := range p.onHost {
		if h {
			return true
		}
	}
	return false
}

// queueAll queues every step and the updates, none on the host.
func (e *executable) queueAll() error { return e.queue(0, len(e.plan.steps)) }

// runSteps runs each instruction's steps, then the updates: those on the
// host with their inputs copied down and outputs copied up; checked or
// timed instruction by instruction when asked.
func (e *executable) runSteps(opts vm.RunOptions) error {
	instrs := e.prog.Instructions()
	clock := time.Now()
	for i, r := range e.plan.instrs {
		if e.plan.onHost[i] {
			if err := e.onHost(i, &instrs[i]); err != nil {
				return err
			}
		} else if err := e.queue(r[0], r[1]); err != nil {
			return fmt.Errorf("%s (node %v): %v", instrs[i].Name(), instrs[i].Node, err)
		}
		if opts.CheckFinite {
			if err := e.checkFinite(i, &instrs[i]); err != nil {
				return err
			}
			if err := e.checkFault(); err != nil { // checkFinite waited for the work
				return err
			}
		}
		if opts.Times != nil {
			if err := e.dev.be.sync(); err != nil {
				return err
			}
			now := time.Now()
			opts.Times[i] += now.Sub(clock)
			clock = now
		}
	}
	return e.queue(e.plan.updates[0], e.plan.updates[1])
}

// queue queues steps [from, to) on the device.
func (e *executable) queue(from, to int) error {
	be := e.dev.be
	for i := from; i < to; i++ {
		s := &e.plan.steps[i]
		var err error
		switch s.kind {
		case stepKernel:
			err = be.launch(e.funcs[s.kernel], s.n, e.args[i])
		case stepCopy:
			err = be.copy(e.addr(s.args[0]), e.addr(s.args[1]), s.n)
		case stepGemm:
			err = be.gemm(&e.gemms[i])
		case stepLibrary:
			err = be.callLibrary(&e.plan.calls[s.lib], e.libs[i])
			if w := e.watches[i]; w != nil && err == nil {
				be.watch(w)
			}
		case stepHost:
			err = errors.New("an instruction for the host among the device's steps")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// onHost runs instruction i on the host: its inputs copied down into the
// machine's host tensors, its outputs copied back up.
func (e *executable) onHost(i int, in *compile.Instruction) error {
	for _, s := range in.In {
		if err := e.read(s, e.cfg.Host[s]); err != nil {
			return err
		}
	}
	if err := e.cfg.RunOnHost(i); err != nil {
		return err
	}
	for _, s := range in.Out {
		if err := e.write(s, e.cfg.Host[s]); err != nil {
			return err
		}
	}
	return nil
}

// checkFinite copies instruction i's outputs down and reports the first
// NaN or infinity.
func (e *executable) checkFinite(i int, in *compile.Instruction) error {
	for k, s := range in.Out {
		if !graph.IsFloat(in.OutTypes[k].DType) {
			continue
		}
		host := e.cfg.Host[s]
		if err := e.read(s, host); err != nil {
			return err
		}
		for j := range in.OutTypes[k].Size() {
			if v := graph.Float(host, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return &vm.NonFinite{Instr: i, Output: k, Element: j, Value: v}
			}
		}
	}
	return nil
}

// Close frees the device memory the executable owns.
func (e *executable) Close() error {
	e.dev.mu.Lock()
	defer e.dev.mu.Unlock()
	return e.release()
}

// release frees what Close frees, the device's lock held.
//
// Buffers that executables sharing its parameters still use are freed
// when the last of them is released.
func (e *executable) release() error {
	if e.closed {
		return nil
	}
	e.closed = true
	if e.dev.closed {
		return nil // the device's Close freed all its memory
	}
	var first error
	if p := e.parent; p != nil {
		e.parent = nil
		if p.sharers--; p.closed && p.sharers == 0 {
			first = p.freeBuffers()
		}
	}
	if e.sharers > 0 {
		return first // freed by the last sharer's release
	}
	if err := e.freeBuffers(); first == nil {
		first = err
	}
	return first
}

// freeBuffers frees the device memory the executable owns.
func (e *executable) freeBuffers() error {
	var first error
	for i, p := range e.bufs {
		if e.owned[i] && p != 0 {
			if err := e.dev.be.free(p); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}
