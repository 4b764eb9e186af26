package cuda

import (
	"errors"
	"sync"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/vm"
)

// Device is a GPU that machines run programs on:
//
//	dev, err := cuda.Open(0)
//	...
//	m, err := vm.New(prog, vm.OnDevice(dev))
//
// The machine keeps its usual contract (see vm.Device); the device holds
// its parameters and values, runs its elementwise groups, reductions and
// other ops as CUDA kernels compiled once by NVRTC, its matrix products
// through cuBLAS, the ops that are library calls (graph.LibraryOp: package
// dist's collectives, through NCCL) on its stream, and ops without a GPU
// kernel on the host, with copies (vm.Machine.OnHost tells which;
// Describe lists the steps). After the first run, a run with no
// host instruction is one replay of a CUDA graph. Machines on one device
// may be used from different goroutines: the device serialises their
// calls.
type Device struct {
	be     backend
	name   string
	mu     sync.Mutex
	closed bool // by Close: loads and the executables loaded fail
}

// errNilDevice is what a nil or zero *Device reports.
var errNilDevice = errors.New("cuda: the device is nil or zero: open it with cuda.Open or cuda.OpenHost (was the error opening it ignored?)")

// errDeviceClosed is what a closed device's executables, and Load, report.
var errDeviceClosed = errors.New("the device is closed (Device.Close)")

// Load prepares a program to run on the device (vm.Device): machines call
// it; users pass the device to vm.New with vm.OnDevice. It fails on a
// nil or closed device.
func (d *Device) Load(p *compile.Program, cfg vm.LoadConfig) (vm.Executable, error) {
	if d == nil || d.be == nil {
		return nil, errNilDevice
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, errDeviceClosed
	}
	e, err := d.load(p, cfg)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// String names the device ("cuda.Device(nil)" for a nil or zero one).
func (d *Device) String() string {
	if d == nil || d.be == nil {
		return "cuda.Device(nil)"
	}
	return d.name
}

// module compiles a module's source (the backend caches it).
func (d *Device) module(src string) (module, error) { return d.be.compile(src) }

// Close releases the device and all its memory. The machines made on it
// are unusable after: their Run, Get and Set, and vm.New on the device,
// return an error saying the device is closed; closing them, which is
// still needed to stop their workers early, loses their parameters (close
// the machines first to keep them on the CPU). Closing a closed device
// does nothing.
func (d *Device) Close() error {
	if d == nil || d.be == nil {
		return errNilDevice
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	return d.be.close()
}

// OpenHost opens a stand-in for a GPU that runs on the CPU: the kernels a
// GPU would run, compiled by the host's C compiler (gcc or cc) and run one
// work item after another, and products as a plain loop. It is for
// testing code that uses a device on machines without a GPU (CI): it
// follows the GPU's plan step for step, slowly.
func OpenHost() (*Device, error) { return openHost(false) }

// OpenOrHost opens the first GPU or, where none opens, the host stand-in
// (OpenHost): for tests of code that uses a device, which then run on the
// GPU where there is one and on any machine with a C compiler.
func OpenOrHost() (*Device, error) {
	d, err := Open(0)
	if err == nil {
		return d, nil
	}
	if d, herr := OpenHost(); herr == nil {
		return d, nil
	}
	return nil, err
}

// openHost opens the host stand-in, running each kernel's work items from
// the last to the first when reverse is set.
func openHost(reverse bool) (*Device, error) {
	be, err := newHostBackend()
	if err != nil {
		return nil, err
	}
	be.reverse = reverse
	return &Device{be: be, name: be.String()}, nil
}

// Open opens GPU number ordinal (0 for the first): it loads the driver,
// NVRTC and cuBLAS (see Available and the README for where they are
// looked for), or says which is missing.
func Open(ordinal int) (*Device, error) {
	be, err := newGPUBackend(ordinal)
	if err != nil {
		return nil, err
	}
	return &Device{be: be, name: be.String()}, nil
}
