package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/ebitengine/purego"
)

// driver is the CUDA driver API as loaded at run time: the functions the
// backend calls, resolved by their versioned names.
type driver struct {
	cuInit             func(flags uint32) int32
	cuDeviceGetCount   func(count *int32) int32
	cuDriverGetVersion func(version *int32) int32
}

var (
	loadOnce  sync.Once
	loaded    *driver
	loadError error
)

// driverLibrary is the driver's shared library, found through the linker
// cache as any program linked against it would.
const driverLibrary = "libcuda.so.1"

// Available reports whether an NVIDIA GPU can be used: the driver's library
// loads (without cgo, through purego), initialises, and counts at least one
// device. Its error says which of these failed. It never panics, and loads
// the driver once.
func Available() error {
	_, err := load()
	return err
}

// DriverVersion is the CUDA version the driver supports (12040 for 12.4),
// or an error from Available.
func DriverVersion() (int, error) {
	d, err := load()
	if err != nil {
		return 0, err
	}
	var v int32
	if r := d.cuDriverGetVersion(&v); r != 0 {
		return 0, fmt.Errorf("cuda: cuDriverGetVersion failed with CUresult %d", r)
	}
	return int(v), nil
}

func load() (*driver, error) {
	loadOnce.Do(func() { loaded, loadError = open() })
	return loaded, loadError
}

func open() (d *driver, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("cuda: loading %s panicked: %v", driverLibrary, r)
		}
	}()
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("cuda: the backend loads the NVIDIA driver on Linux only, not on %s", runtime.GOOS)
	}
	lib, err := purego.Dlopen(driverLibrary, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("cuda: no NVIDIA driver: %s does not load (%v)", driverLibrary, err)
	}
	d = &driver{}
	for name, fn := range map[string]any{
		"cuInit":             &d.cuInit,
		"cuDeviceGetCount":   &d.cuDeviceGetCount,
		"cuDriverGetVersion": &d.cuDriverGetVersion,
	} {
		if _, err := purego.Dlsym(lib, name); err != nil {
			return nil, fmt.Errorf("cuda: %s has no %s: %v", driverLibrary, name, err)
		}
		purego.RegisterLibFunc(fn, lib, name)
	}
	if r := d.cuInit(0); r != 0 {
		return nil, fmt.Errorf("cuda: cuInit failed with CUresult %d (no usable GPU, or the driver does not match the kernel module)", r)
	}
	var n int32
	if r := d.cuDeviceGetCount(&n); r != 0 {
		return nil, fmt.Errorf("cuda: cuDeviceGetCount failed with CUresult %d", r)
	}
	if n == 0 {
		return nil, errors.New("cuda: the driver loads but sees no GPU")
	}
	return d, nil
}
