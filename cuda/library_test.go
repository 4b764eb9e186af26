package cuda

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// libOp is an op that a device runs as a library call: out = 2·in, on
// float64, written by Go on the host stand-in's memory. mode picks what
// Library returns.
type libOp struct {
	mode string
	h    *hostBackend
}

func (libOp) Name() string { return "Twice" }

func (libOp) Type(in []graph.Type) (graph.Type, error) { return in[0], nil }

func (libOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	for i, x := range in[0].Float64s() {
		out.Float64s()[i] = 2 * x
	}
	return nil
}

func (o libOp) Library(dev graph.LibraryDevice, in, _ []graph.Type) (*graph.LibraryCall, error) {
	n := in[0].Size()
	switch {
	case !dev.HostStandIn || o.mode == "decline":
		return nil, nil
	case o.mode == "prepare fails":
		return nil, errors.New("no communicator")
	case o.mode == "identity":
		return &graph.LibraryCall{Label: "copy", Identity: true}, nil
	}
	var check func() error
	if o.mode == "check fails" {
		check = func() error { return errors.New("the communicator is closed") }
	}
	return &graph.LibraryCall{Label: "lib twice", ZeroOutputs: o.mode == "zero", Check: check, Call: func(in, out []uintptr, stream uintptr) error {
		if o.mode == "call fails" {
			return errors.New("the library refused")
		}
		if stream != 0 {
			return errors.New("a stream on the host stand-in")
		}
		src, err := o.floats(in[0], n)
		if err != nil {
			return err
		}
		dst, err := o.floats(out[0], n)
		if err != nil {
			return err
		}
		for i := range dst {
			if o.mode == "zero" {
				dst[i] += 2 * src[i] // the output was zeroed first
			} else {
				dst[i] = 2 * src[i]
			}
		}
		return nil
	}}, nil
}

// floats are the n float64s at the host stand-in's address p.
func (o libOp) floats(p uintptr, n int) ([]float64, error) {
	b, err := o.h.bytesAt(ptr(p), int64(8*n))
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), n), nil
}

// TestLibraryStep: an op implementing graph.LibraryOp is a library step of
// the plan on the host stand-in (its output zeroed first where it asks, a
// copy where it is the identity), on the host where it declines; an error
// preparing the call fails the load, an error of the call or of its
// Check the run, named after the op.
func TestLibraryStep(t *testing.T) {
	dev, err := OpenHost()
	if err != nil {
		t.Skip(err)
	}
	defer dev.Close()
	for _, c := range []struct{ mode, plan, want, err string }{
		{"", "library lib twice(b0 → b1)", "[2 -4 1]", ""},
		{"zero", "kernel k0(b1) × 3\n\tlibrary lib twice(b0 → b1)", "[2 -4 1]", ""},
		{"identity", "copy 24 bytes b1 ← b0", "[1 -2 0.5]", ""},
		{"decline", "0 Twice: host", "[2 -4 1]", ""},
		{"prepare fails", "", "", "no communicator"},
		{"call fails", "", "", "Twice (node Twice #1 float64(3)): the library refused"},
		{"check fails", "", "", "Twice (node Twice #1 float64(3)): the communicator is closed"},
	} {
		g := graph.New()
		x := g.Input("x", graph.Float64, 3)
		y := graph.Apply(libOp{c.mode, dev.be.(*hostBackend)}, x)
		p, err := compile.Compile([]*graph.Node{y})
		if err != nil {
			t.Fatal(err)
		}
		m, err := vm.New(p, vm.OnDevice(dev))
		if err == nil {
			defer m.Close()
			in := tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, -2, 0.5}))
			for range 2 { // a second run sees the first's output, unless it is zeroed
				if err = m.Run(vm.Feeds{x: in}); err != nil {
					break
				}
			}
		}
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want one containing %q", c.mode, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.mode, err)
		}
		plan, err := Describe(m)
		if err != nil || !strings.Contains(plan, c.plan) {
			t.Errorf("%q: plan %q (%v), want it to contain %q", c.mode, plan, err, c.plan)
		}
		v, err := m.Value(y)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(v.Float64s()); got != c.want {
			t.Errorf("%q: %s, want %s", c.mode, got, c.want)
		}
	}
}
