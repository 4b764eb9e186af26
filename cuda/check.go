package cuda

import (
	"errors"
	"fmt"
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// CheckOp checks a GPU kernel against the CPU: it runs f (a function of
// nodes standing for inputs; typically one op applied to them) on dev and
// on the CPU, its output and the gradients of a weighted sum of it with
// respect to every float input, and compares them, float64 to 1e-12 and
// float32 to 1e-5 relative. It returns the names of the ops that ran on
// the host for want of a GPU kernel (a custom op without graph.CUDAKernel
// among them), and an error naming the first value that differs. The
// built-in ops' conformance test is CheckOp over the op table.
func CheckOp(dev *Device, f func(in []*graph.Node) *graph.Node, inputs ...*tensor.Dense) (onHost []string, err error) {
	switch {
	case dev == nil || dev.be == nil:
		return nil, fmt.Errorf("cuda: CheckOp: %v", errNilDevice)
	case f == nil:
		return nil, errors.New("cuda: CheckOp: the function is nil")
	}
	g := graph.New()
	feeds := vm.Feeds{}
	var ins, wrt []*graph.Node
	for i, x := range inputs {
		if x == nil || x.Dtype().Type == nil || x.Shape() == nil {
			return nil, fmt.Errorf("cuda: CheckOp: input %d is nil or empty (a zero tensor.Dense)", i)
		}
		n := g.Input(fmt.Sprintf("x%d", i), x.Dtype(), x.Shape()...)
		ins, feeds[n] = append(ins, n), x
		if graph.IsFloat(x.Dtype()) {
			wrt = append(wrt, n)
		}
	}
	y, err := apply(f, ins)
	if err != nil {
		return nil, err
	}
	outs := []*graph.Node{y}
	if graph.IsFloat(y.DType()) && len(wrt) > 0 {
		w := graph.NewDenseOf(y.Type())
		for i := range y.Type().Size() {
			graph.SetFloat(w, i, math.Sin(float64(i)+1)) // fixed, signed, away from 0
		}
		grads, err := compile.GradWith(ops.Sum(ops.Mul(y, g.Const(w))), wrt, compile.ZerosIfDisconnected())
		if err != nil {
			return nil, err
		}
		outs = append(outs, grads...)
	}
	prog, err := compile.Compile(outs, compile.WithFixedDraws())
	if err != nil {
		return nil, err
	}
	cpu, err := vm.New(prog, vm.WithThreads(1))
	if err != nil {
		return nil, err
	}
	m, err := vm.New(prog, vm.OnDevice(dev))
	if err != nil {
		return nil, err
	}
	defer m.Close()
	if err := compareRun(cpu, m, feeds, outs); err != nil {
		return nil, err
	}
	for i, in := range prog.Instructions() {
		if m.OnHost(i) {
			onHost = append(onHost, in.Name())
		}
	}
	return onHost, nil
}

// apply calls f on ins: its result, or why it has none (a nil node, a
// poisoned one, a panic).
func apply(f func(in []*graph.Node) *graph.Node, ins []*graph.Node) (y *graph.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			y, err = nil, fmt.Errorf("cuda: CheckOp: the function panicked: %v", r)
		}
	}()
	y = f(ins)
	if y == nil {
		return nil, errors.New("cuda: CheckOp: the function returned a nil node")
	}
	return y, y.Err()
}

// compareRun runs feeds on a CPU machine and a device machine and
// compares the given values, float64 to 1e-12 and float32 to 1e-5
// relative (to the larger of 1 and the CPU's magnitude).
func compareRun(cpu, dev *vm.Machine, feeds vm.Feeds, nodes []*graph.Node) error {
	if err := cpu.Run(feeds); err != nil {
		return fmt.Errorf("on the CPU: %v", err)
	}
	if err := dev.Run(feeds); err != nil {
		return err
	}
	for _, n := range nodes {
		want, err := cpu.Value(n)
		if err != nil {
			return err
		}
		got, err := dev.Value(n)
		if err != nil {
			return err
		}
		if msg := closeTo(got, want, tolerance(n.DType())); msg != "" {
			return fmt.Errorf("%v on %v: %s", n, dev.Device(), msg)
		}
	}
	return nil
}

// tolerance is the relative difference allowed between a device's values
// and the CPU's: float32 to 1e-5, others to 1e-12.
func tolerance(dtype tensor.Dtype) float64 {
	if dtype == graph.Float32 {
		return 1e-5
	}
	return 1e-12
}

// closeTo describes the first element where got and want differ by more
// than tol relative (to max(1, |want|)), or returns "".
func closeTo(got, want *tensor.Dense, tol float64) string {
	if !got.Shape().Eq(want.Shape()) || got.Dtype() != want.Dtype() {
		return fmt.Sprintf("%v%v, want %v%v", got.Dtype(), got.Shape(), want.Dtype(), want.Shape())
	}
	for i := range graph.ShapeSize(want.Shape()) {
		g, w := graph.Float(got, i), graph.Float(want, i)
		if g == w || math.IsNaN(g) && math.IsNaN(w) { // equal infinities too
			continue
		}
		// An infinity equals only itself (the relative bound is infinite).
		if math.IsInf(w, 0) || !(math.Abs(g-w) <= tol*max(1, math.Abs(w))) {
			return fmt.Sprintf("element %d: %v, want %v", i, g, w)
		}
	}
	return ""
}
