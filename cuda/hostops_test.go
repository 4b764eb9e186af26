package cuda

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/site"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// flakyOp is a user's op with no device kernel (it runs on the host)
// whose Forward fails, or panics.
type flakyOp struct{ panics bool }

func (flakyOp) Name() string                             { return "Flaky" }
func (flakyOp) Type(in []graph.Type) (graph.Type, error) { return in[0], nil }
func (o flakyOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	if o.panics {
		panic("kaboom")
	}
	return errors.New("refused")
}

// An op without a kernel, run on the host by a device machine, fails as
// on the CPU: its error, or its panic, is the run's error naming the op
// and the line that built it (a panic went through Run, ending the
// program); the device runs other programs after it.
func TestHostOpsFailAsOnTheCPU(t *testing.T) {
	dev, err := OpenHost()
	if err != nil {
		t.Skipf("no host stand-in: %v", err)
	}
	defer dev.Close()
	x, err := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		op   flakyOp
		want string
	}{{flakyOp{}, "refused"}, {flakyOp{panics: true}, "kernel panicked: kaboom"}} {
		g := graph.New()
		in := g.Input("x", graph.Float64, 3)
		y, line := ops.Exp(graph.Apply(c.op, ops.Sin(in))), site.At(0)
		p, err := compile.Compile([]*graph.Node{y})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("nabla: Flaky (node Flaky #2 float64(3)): %s (built at %s)", c.want, line)
		for _, opts := range [][]vm.Option{nil, {vm.OnDevice(dev)}} {
			m, err := vm.New(p, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Run(vm.Feeds{in: x}); err == nil || err.Error() != want {
				t.Errorf("%d options: got  %v\nwant %s", len(opts), err, want)
			}
			m.Close()
		}
	}
	m, in, y := deviceMachineOf(t, dev, ops.Exp)
	if err := m.Run(vm.Feeds{in: x}); err != nil {
		t.Fatal(err)
	}
	v, err := m.Value(y)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range graph.Float64s(v) {
		if want := math.Exp(float64(i + 1)); math.Abs(e-want) > 1e-12*want {
			t.Errorf("exp(%d) = %v on the device after the failures, want %v", i+1, e, want)
		}
	}
}
