package cuda

import (
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// wantError fails the test unless err holds part.
func wantError(t *testing.T, what string, err error, part string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), part) {
		t.Errorf("%s: got error %v, want one containing %q", what, err, part)
	}
}

// sumProgram sums a parameter w of (1, 2, 3, 4) into an output.
func sumProgram(t *testing.T) (prog *compile.Program, w, sum *graph.Node) {
	t.Helper()
	g := graph.New()
	wv, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 4}, 4)
	w = g.Param("w", wv)
	sum = ops.Sum(w)
	prog, err := compile.Compile([]*graph.Node{sum})
	if err != nil {
		t.Fatal(err)
	}
	return prog, w, sum
}

// Closing a device invalidates the machines made on it: no memory of
// the closed device is used again, by them or by a machine made after,
// which New refuses. A machine read before the close keeps its value
// (10, its own sum); closed after, it has lost its parameters and says
// so.
func TestClosedDeviceInvalidatesItsMachines(t *testing.T) {
	for _, dev := range testDevices(t) {
		t.Run(dev.String(), func(t *testing.T) { checkClosedDevice(t, dev) })
	}
}

func checkClosedDevice(t *testing.T, dev *Device) {
	prog, w, sum := sumProgram(t)
	read, err := vm.New(prog, vm.OnDevice(dev))
	if err != nil {
		t.Fatal(err)
	}
	unread, err := vm.New(prog, vm.OnDevice(dev))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*vm.Machine{read, unread} {
		if err := m.Run(nil); err != nil {
			t.Fatal(err)
		}
	}
	if s, err := read.Scalar(sum); err != nil || s != 10 {
		t.Fatalf("sum before the close: %v, %v; want 10", s, err)
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	if err := dev.Close(); err != nil {
		t.Errorf("closing the device again: %v", err)
	}
	const closed = "the device is closed"
	_, err = vm.New(prog, vm.OnDevice(dev))
	wantError(t, "vm.New on the closed device", err, closed)
	if s, err := read.Scalar(sum); err != nil || s != 10 {
		t.Errorf("sum read before the close, after it: %v, %v; want 10", s, err)
	}
	_, err = unread.Scalar(sum)
	wantError(t, "Scalar after the close", err, closed)
	wantError(t, "Run after the close", unread.Run(nil), closed)
	_, err = unread.Get(w)
	wantError(t, "Get after the close", err, closed)
	wantError(t, "Set after the close", unread.Set(w, graph.NewDense(graph.Float64, 4)), closed)
	wantError(t, "SetScalar of a 4-vector", unread.SetScalar(w, 1), "not one")
	_, err = dev.Load(prog, vm.LoadConfig{})
	wantError(t, "Load on the closed device", err, closed)
	unread.Close()
	wantError(t, "Run after closing the machine", unread.Run(nil), "could not be read back")
	_, err = unread.Get(w)
	wantError(t, "Get after closing the machine", err, "unusable")
}

// A nil or zero device is an error wherever it is used, not a panic.
func TestNilDeviceIsAnError(t *testing.T) {
	prog, _, _ := sumProgram(t)
	for _, dev := range []*Device{nil, {}} {
		if s := dev.String(); s != "cuda.Device(nil)" {
			t.Errorf("String of %#v = %q", dev, s)
		}
		wantError(t, "Close", dev.Close(), "device is nil")
		_, err := dev.Load(prog, vm.LoadConfig{})
		wantError(t, "Load", err, "device is nil")
		_, err = vm.New(prog, vm.OnDevice(dev))
		if dev == nil {
			wantError(t, "vm.New on a nil device", err, "OnDevice: the device is nil")
		} else {
			wantError(t, "vm.New on a zero device", err, "device is nil")
		}
		x, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2}, 2)
		_, err = CheckOp(dev, func(in []*graph.Node) *graph.Node { return ops.Exp(in[0]) }, x)
		wantError(t, "CheckOp", err, "device is nil")
	}
}

// CheckOp's other mistakes (a nil function, a nil or zero input, a
// function returning nil or panicking) are errors, before any use of
// the device.
func TestCheckOpMisuse(t *testing.T) {
	dev, err := OpenHost()
	if err != nil {
		t.Skipf("no host stand-in: %v", err)
	}
	defer dev.Close()
	x, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2}, 2)
	exp := func(in []*graph.Node) *graph.Node { return ops.Exp(in[0]) }
	_, err = CheckOp(dev, nil, x)
	wantError(t, "nil function", err, "CheckOp: the function is nil")
	_, err = CheckOp(dev, exp, nil)
	wantError(t, "nil input", err, "CheckOp: input 0 is nil or empty")
	_, err = CheckOp(dev, exp, x, &tensor.Dense{})
	wantError(t, "zero input", err, "CheckOp: input 1 is nil or empty")
	_, err = CheckOp(dev, func([]*graph.Node) *graph.Node { return nil }, x)
	wantError(t, "nil node", err, "returned a nil node")
	_, err = CheckOp(dev, func(in []*graph.Node) *graph.Node { return in[3] }, x)
	wantError(t, "panicking function", err, "the function panicked")
}
