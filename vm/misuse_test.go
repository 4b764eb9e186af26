package vm_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

func wantErr(t *testing.T, what string, err error, part string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), part) {
		t.Errorf("%s: got error %v, want one containing %q", what, err, part)
	}
}

// Zero-value and nil machines, and nil options, give errors or are
// ignored; nothing panics.
func TestZeroValuesAndNilOptions(t *testing.T) {
	var zero vm.Machine
	wantErr(t, "zero Machine Run", zero.Run(nil), "vm.New")
	_, err := zero.Value(nil)
	wantErr(t, "zero Machine Value", err, "vm.New")
	var nilMachine *vm.Machine
	if p := nilMachine.Profile(); len(p.Entries) != 0 {
		t.Errorf("nil machine's profile has %d entries", len(p.Entries))
	}
	nilMachine.ResetProfile()
	zero.Close()
	if nilMachine.Program() != nil || zero.Program() != nil {
		t.Error("a nil or zero machine has a program")
	}

	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := ops.Scale(x, 2)
	p, err := compile.Compile([]*graph.Node{y}, nil)
	if err != nil {
		t.Fatalf("Compile with a nil option: %v", err)
	}
	m, err := vm.New(p, nil)
	if err != nil {
		t.Fatalf("New with a nil option: %v", err)
	}
	_, err = vm.New(p, vm.SharingParams(&vm.Machine{}))
	wantErr(t, "SharingParams of a zero machine", err, "SharingParams: the other machine is nil or zero")
	_, err = vm.New(p, vm.SharingParams(nil))
	wantErr(t, "SharingParams of nil", err, "SharingParams: the other machine is nil or zero")
	_, err = vm.New(p, vm.OnDevice(nil))
	wantErr(t, "OnDevice(nil)", err, "OnDevice: the device is nil (<nil>)")
	var device *nilDevice
	_, err = vm.New(p, vm.OnDevice(device))
	wantErr(t, "OnDevice of a nil pointer", err, "OnDevice: the device is nil (*vm_test.nilDevice)")
	_, err = m.Value(y)
	wantErr(t, "Value before Run", err, "has not run")
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2}, 2)
	if err := m.Run(vm.Feeds{x: xv}); err != nil {
		t.Fatal(err)
	}
	if v, err := m.Value(y); err != nil || v.Float64s()[1] != 4 {
		t.Errorf("Value after Run: %v, %v; want [2 4]", v, err)
	}
}

// nilDevice is a vm.Device whose methods a nil pointer cannot serve.
type nilDevice struct{ name string }

func (d *nilDevice) Load(*compile.Program, vm.LoadConfig) (vm.Executable, error) {
	return nil, errors.New("no")
}
func (d *nilDevice) String() string { return d.name }

// Every exported method of a nil or zero Machine or Runner, called with
// zero arguments, returns an error (where it returns one) or a zero value,
// and never panics; a nil or zero Machine's error is the one that says
// so. Those of a working Machine and Runner, called with zero arguments
// (nil nodes, feeds, tensors), do not panic either.
func TestEveryMethodOnNilAndZero(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	y := ops.Mul(x, g.Param("w", graph.NewDense(graph.Float64, 2)))
	p, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	r, err := vm.NewRunner([]*graph.Node{y}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []any{m, r} {
		v := reflect.ValueOf(r)
		for i := range v.NumMethod() {
			callZero(t, fmt.Sprintf("(%T).%s", r, v.Type().Method(i).Name), v.Method(i))
		}
	}
	receivers := []any{(*vm.Machine)(nil), &vm.Machine{}, (*vm.Runner)(nil), &vm.Runner{}}
	errType := reflect.TypeFor[error]()
	for _, r := range receivers {
		v := reflect.ValueOf(r)
		for i := range v.NumMethod() {
			name := fmt.Sprintf("(%T nil=%v).%s", r, v.IsNil(), v.Type().Method(i).Name)
			for _, o := range callZero(t, name, v.Method(i)) {
				if o.Type() != errType {
					if !o.IsZero() {
						t.Errorf("%s returned %v, want a zero value", name, o)
					}
					continue
				}
				err, _ := o.Interface().(error)
				wantErr(t, name, err, "is nil or zero: make one with vm.New")
			}
		}
	}
}

// callZero calls method with the zero value of each argument, failing
// the test if it panics.
func callZero(t *testing.T, name string, method reflect.Value) (out []reflect.Value) {
	t.Helper()
	var args []reflect.Value
	for k := range method.Type().NumIn() {
		args = append(args, reflect.Zero(method.Type().In(k)))
	}
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("%s panicked: %v", name, p)
		}
	}()
	return method.Call(args)
}

// blockOp's kernel signals that it started and waits to be released.
type blockOp struct{ started, release chan struct{} }

func (blockOp) Name() string                             { return "Block" }
func (blockOp) Type(in []graph.Type) (graph.Type, error) { return in[0], nil }
func (o blockOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	o.started <- struct{}{}
	<-o.release
	copy(out.Float64s(), in[0].Float64s())
	return nil
}

// A machine used from another goroutine during its Run says so, and the
// Run it interrupted completes with its own values.
func TestUseDuringRunIsAnError(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	w := g.Param("w", graph.NewDense(graph.Float64, 2))
	op := blockOp{started: make(chan struct{}), release: make(chan struct{})}
	y := ops.Add(graph.Apply(op, x), w)
	p, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2}, 2)
	done := make(chan error)
	go func() { done <- m.Run(vm.Feeds{x: xv}) }()
	<-op.started
	wantErr(t, "Run during Run", m.Run(vm.Feeds{x: xv}), "another goroutine")
	_, err = m.Value(y)
	wantErr(t, "Value during Run", err, "another goroutine")
	wantErr(t, "Set during Run", m.Set(w, graph.NewDense(graph.Float64, 2)), "another goroutine")
	_, err = m.Get(w)
	wantErr(t, "Get during Run", err, "another goroutine")
	_, err = m.Scalar(y)
	wantErr(t, "Scalar during Run", err, "another goroutine")
	wantErr(t, "SetScalar during Run", m.SetScalar(w, 1), "another goroutine")
	close(op.release)
	if err := <-done; err != nil {
		t.Fatalf("the interrupted Run: %v", err)
	}
	if v, err := m.Value(y); err != nil || v.Float64s()[1] != 2 {
		t.Errorf("after the Run: %v, %v; want [1 2]", v, err)
	}
}

// A constant output's value is the user's to write: writing it changes
// neither this machine's next run, nor another machine, nor the graph.
func TestConstantValueIsACopy(t *testing.T) {
	g := graph.New()
	c, _ := graph.FromFloat64s(graph.Float64, []float64{3, 4}, 2)
	k := g.Const(c)
	x := g.Input("x", graph.Float64, 2)
	y := ops.Mul(x, k)
	p, err := compile.Compile([]*graph.Node{k, y})
	if err != nil {
		t.Fatal(err)
	}
	m1, _ := vm.New(p)
	v, err := m1.Value(k)
	if err != nil {
		t.Fatal(err)
	}
	v.Float64s()[0] = 100
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{1, 1}, 2)
	m2, _ := vm.New(p)
	for _, m := range []*vm.Machine{m1, m2} {
		if err := m.Run(vm.Feeds{x: xv}); err != nil {
			t.Fatal(err)
		}
		if got, _ := m.Value(y); got.Float64s()[0] != 3 {
			t.Errorf("x·k after writing k's value: got %v, want [3 4]", got.Float64s())
		}
	}
	if k.Value().Float64s()[0] != 3 {
		t.Errorf("the graph's constant became %v", k.Value().Float64s())
	}
}

// A zero tensor.Dense fed as an input is reported, not formatted into a
// panic.
func TestZeroDenseFeed(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	p, err := compile.Compile([]*graph.Node{ops.Sum(x)})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := vm.New(p)
	wantErr(t, "zero Dense", m.Run(vm.Feeds{x: &tensor.Dense{}}), "the tensor is empty")
	wantErr(t, "compile.WriteDot to nil", compile.WriteDot(nil, p), "nil writer")
}
