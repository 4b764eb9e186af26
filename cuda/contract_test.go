package cuda

import (
	"math"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// A machine on a device keeps vm.Machine's contract: Get and Set reach
// the device's parameters, a NaN check names the node and leaves the
// parameters as they were, the profile counts every instruction, a
// machine sharing parameters sees the other's updates, and a closed
// machine goes on on the CPU from the device's parameters.
func TestMachineContract(t *testing.T) {
	for _, dev := range testDevices(t) {
		prog, feeds := mlpStep(t, graph.Float64, nn.NewSGD(nn.SGDConfig{LR: 0.1}))
		m, err := vm.New(prog, vm.OnDevice(dev), vm.WithNaNCheck(), vm.WithProfile())
		if err != nil {
			t.Fatal(err)
		}
		p := prog.Params()[0]
		before, err := m.Get(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Value(prog.Outputs()[0]); err == nil {
			t.Errorf("%v: Value of the loss before any run: no error", dev)
		}
		if err := m.Run(feeds[0]); err != nil {
			t.Fatal(err)
		}
		after, _ := m.Get(p)
		if closeTo(after, before, 0) == "" {
			t.Errorf("%v: a training step left %v unchanged", dev, p)
		}
		// Set, then Get, round-trips through the device.
		if err := m.Set(p, before); err != nil {
			t.Fatal(err)
		}
		if got, _ := m.Get(p); closeTo(got, before, 0) != "" {
			t.Errorf("%v: Get after Set: %s", dev, closeTo(got, before, 0))
		}
		// A NaN in the input: the run fails naming a node, and the
		// parameters are those before it.
		x := prog.Inputs()[0]
		bad, _ := graph.CloneDense(feeds[1][x])
		bad.Float64s()[0] = nanValue()
		badFeeds := vm.Feeds{x: bad, prog.Inputs()[1]: feeds[1][prog.Inputs()[1]]}
		err = m.Run(badFeeds)
		if err == nil || !strings.Contains(err.Error(), "NaN") || !strings.Contains(err.Error(), dev.String()) {
			t.Errorf("%v: a NaN input: got %v, want an error naming NaN and the device", dev, err)
		}
		if got, _ := m.Get(p); closeTo(got, before, 0) != "" {
			t.Errorf("%v: after a failed run the parameter changed: %s", dev, closeTo(got, before, 0))
		}
		prof := m.Profile()
		for _, e := range prof.Entries {
			if e.Runs == 0 {
				t.Errorf("%v: profile: instruction %d (%s) never ran", dev, e.Instruction, e.Op)
			}
			if e.OnHost != m.OnHost(e.Instruction) {
				t.Errorf("%v: profile: instruction %d (%s): OnHost %v, the machine says %v", dev, e.Instruction, e.Op, e.OnHost, m.OnHost(e.Instruction))
			}
		}
		var table strings.Builder
		if err := prof.WriteTable(&table, 0); err != nil {
			t.Fatal(err)
		}
		hosted := 0
		for i := range prog.Instructions() {
			if m.OnHost(i) {
				hosted++
			}
		}
		if got := strings.Count(table.String(), "(on the host)"); got != hosted {
			t.Errorf("%v: the profile's table marks %d instructions as on the host, want %d:\n%s", dev, got, hosted, table.String())
		}
		// Close: the machine goes on on the CPU from the device's values.
		if err := m.Run(feeds[2]); err != nil {
			t.Fatal(err)
		}
		onDevice, _ := m.Get(p)
		m.Close()
		if m.Device() != nil {
			t.Errorf("%v: a closed machine still names its device", dev)
		}
		if got, _ := m.Get(p); closeTo(got, onDevice, 0) != "" {
			t.Errorf("%v: after Close the parameter is not the device's: %s", dev, closeTo(got, onDevice, 0))
		}
		if err := m.Run(feeds[0]); err != nil {
			t.Errorf("%v: a closed machine does not run on the CPU: %v", dev, err)
		}
	}
}

// Two programs sharing parameters on one device: an evaluation machine
// sees the training machine's updates, and runs on after that machine is
// closed.
func TestSharingParams(t *testing.T) {
	for _, dev := range testDevices(t) {
		g := graph.New()
		w := g.Param("w", mustTensor(t, []float64{1, 2, 3}, 3))
		x := g.Input("x", graph.Float64, 3)
		loss := ops.Sum(ops.Square(ops.Sub(ops.Mul(w, x), g.Scalar(1, graph.Float64))))
		grads, err := compile.Grad(loss, w)
		if err != nil {
			t.Fatal(err)
		}
		train, err := compile.Compile([]*graph.Node{loss}, compile.WithUpdates(map[*graph.Node]*graph.Node{w: ops.Sub(w, ops.Scale(grads[0], 0.1))}))
		if err != nil {
			t.Fatal(err)
		}
		eval, err := compile.Compile([]*graph.Node{ops.Mul(w, x)})
		if err != nil {
			t.Fatal(err)
		}
		tm, err := vm.New(train, vm.OnDevice(dev))
		if err != nil {
			t.Fatal(err)
		}
		em, err := vm.New(eval, vm.OnDevice(dev), vm.SharingParams(tm))
		if err != nil {
			t.Fatal(err)
		}
		feeds := vm.Feeds{x: mustTensor(t, []float64{0.5, -1, 2}, 3)}
		for range 2 {
			if err := tm.Run(feeds); err != nil {
				t.Fatal(err)
			}
		}
		want, _ := tm.Get(w)
		if got, _ := em.Get(w); closeTo(got, want, 0) != "" {
			t.Errorf("%v: the evaluation machine's parameter: %s", dev, closeTo(got, want, 0))
		}
		if _, err := vm.New(eval, vm.SharingParams(tm)); err == nil || !strings.Contains(err.Error(), "OnDevice") {
			t.Errorf("%v: a CPU machine sharing a device machine's parameters: got %v, want an error", dev, err)
		}
		// The machine owning the parameters closes first: the other keeps
		// the device's values and runs on.
		tm.Close()
		if err := em.Run(feeds); err != nil {
			t.Fatalf("%v: after the owner closed: %v", dev, err)
		}
		if got, err := em.Get(w); err != nil || closeTo(got, want, 0) != "" {
			t.Errorf("%v: after the owner closed: %v, %v", dev, got, err)
		}
		em.Close()
	}
}

// A training step on a device allocates nothing on the Go heap after its
// first run.
func TestRunDoesNotAllocate(t *testing.T) {
	for _, dev := range testDevices(t) {
		prog, feeds := mlpStep(t, graph.Float32, nn.NewAdam(nn.DefaultAdam()))
		m, err := vm.New(prog, vm.OnDevice(dev))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := m.Run(feeds[0]); err != nil {
				t.Fatal(err)
			}
		}
		loss := prog.Outputs()[0]
		if allocs := testing.AllocsPerRun(5, func() {
			if err := m.Run(feeds[0]); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Value(loss); err != nil {
				t.Fatal(err)
			}
		}); allocs != 0 {
			t.Errorf("%v: %v allocations per step", dev, allocs)
		}
		m.Close()
	}
}

// checkFault runs good feeds, then bad ones holding an index or label out
// of range, and checks that the machine fails, naming one of ops, at Run
// or (on a GPU, which reports when it next waits) at the first Value of
// out; the bad run's outputs can be read after.
func checkFault(t *testing.T, dev *Device, m *vm.Machine, good, bad vm.Feeds, out *graph.Node, ops ...string) {
	t.Helper()
	if err := m.Run(good); err != nil {
		t.Fatalf("%v: valid indices: %v", dev, err)
	}
	if _, err := m.Value(out); err != nil {
		t.Fatalf("%v: valid indices: %v", dev, err)
	}
	err := m.Run(bad)
	if err == nil {
		_, err = m.Value(out)
	}
	named := false
	for _, op := range ops {
		named = named || err != nil && strings.Contains(err.Error(), op)
	}
	if err == nil || !named || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("%v: invalid indices: got %v, want an error naming %v and an index out of range", dev, err, ops)
	}
	if _, err := m.Value(out); err != nil {
		t.Fatalf("%v: after the fault was reported: %v", dev, err)
	}
}

// After its first run, a program with no host step runs as one recorded
// replay (a CUDA graph on a GPU), a Scan unrolled on the device
// included; a program with a host step (a determinant) runs step by step,
// and right.
func TestRunsReplay(t *testing.T) {
	for _, dev := range testDevices(t) {
		prog, feeds := mlpStep(t, graph.Float32, nn.NewSGD(nn.SGDConfig{LR: 0.1}))
		m, err := vm.New(prog, vm.OnDevice(dev))
		if err != nil {
			t.Fatal(err)
		}
		e := m.Executable().(*executable)
		for r := range 2 {
			if err := m.Run(feeds[r]); err != nil {
				t.Fatal(err)
			}
			if e.replay == nil {
				t.Errorf("%v: run %d: no replay recorded", dev, r)
			}
		}
		m.Close()

		g := graph.New()
		x := g.Input("x", graph.Float64, 3)
		_, ys := ops.Scan(func(c, xs []*graph.Node) ([]*graph.Node, []*graph.Node) {
			s := ops.Add(c[0], xs[0])
			return []*graph.Node{s}, []*graph.Node{s}
		}, []*graph.Node{g.Scalar(0, graph.Float64)}, []*graph.Node{x})
		loop, err := compile.Compile([]*graph.Node{ops.Tanh(ys[0])})
		if err != nil {
			t.Fatal(err)
		}
		lm, err := vm.New(loop, vm.OnDevice(dev))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := lm.Run(vm.Feeds{x: mustTensor(t, []float64{1, 2, 3}, 3)}); err != nil {
				t.Fatal(err)
			}
		}
		if got, _ := lm.Value(loop.Outputs()[0]); closeTo(got, mustTensor(t, []float64{math.Tanh(1), math.Tanh(3), math.Tanh(6)}, 3), 1e-12) != "" {
			t.Errorf("%v: the loop gives %v", dev, got)
		}
		if le := lm.Executable().(*executable); le.replay == nil || hasHost(le.plan) {
			t.Errorf("%v: a program whose loop is unrolled on the device recorded no replay", dev)
		}
		lm.Close()

		// The determinant has no device kernel: it runs on the host.
		a := g.Input("a", graph.Float64, 2, 2)
		det, err := compile.Compile([]*graph.Node{ops.Tanh(ops.Det(a))})
		if err != nil {
			t.Fatal(err)
		}
		dm, err := vm.New(det, vm.OnDevice(dev))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := dm.Run(vm.Feeds{a: mustTensor(t, []float64{1, 2, 3, 4}, 2, 2)}); err != nil {
				t.Fatal(err)
			}
		}
		if got, _ := dm.Value(det.Outputs()[0]); closeTo(got, mustTensor(t, []float64{math.Tanh(-2)}), 1e-12) != "" {
			t.Errorf("%v: the determinant gives %v", dev, got)
		}
		if de := dm.Executable().(*executable); de.replay != nil || !hasHost(de.plan) {
			t.Errorf("%v: a program with a host step recorded a replay", dev)
		}
		dm.Close()
	}
}
