package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// castValues are values of each dtype at the edges of the conversions:
// ties and near-ties of rounding to float32 or float64, values beyond
// float32's range or below its normal numbers, -0, NaN, and the integer
// dtypes' extremes. inRange are the ones every integer dtype holds once
// truncated, for the casts that check that.
var castValues = map[tensor.Dtype]struct {
	all, inRange []float64
	ints         []int64 // the integer dtypes' values, exactly
}{
	graph.Float64: {all: []float64{1 + 0x1p-24, 1 + 3*0x1p-24, -(1 + 0x1p-24 + 0x1p-50), 1e300, -1e300, 1e-40, 1e-50, math.Copysign(0, -1),
		math.NaN(), math.Inf(-1), 0.1, -123.456}, inRange: []float64{-3.7, 2.5, 1e9, -2147483647.9, 2147483647.9, math.Copysign(0, -1), 0.99}},
	graph.Float32: {all: []float64{3.4e38, -1e-40, 0.1, -7.25, math.NaN(), math.Inf(1), math.Copysign(0, -1), 16777217},
		inRange: []float64{-3.5, 2.75, 1e9, -0.5, 16777216}},
	graph.Int32: {ints: []int64{math.MinInt32, math.MaxInt32, 16777217, 16777219, -16777217, 0, -1, 7}},
	graph.Int64: {ints: []int64{math.MinInt64, math.MaxInt64, 1<<53 + 1, 1<<53 + 3, -(1<<62 + 1<<38), -(1<<62 + 1<<38 + 1), 16777217, -5, 0},
		inRange: []float64{math.MinInt32, math.MaxInt32, 0, -1, 123456789}},
}

// castDTypes are the dtypes Cast converts between.
var castDTypes = []tensor.Dtype{graph.Float64, graph.Float32, graph.Int32, graph.Int64}

// castCanFail reports whether a cast from one dtype to another fails on
// some values: it does when to is an integer dtype that does not hold
// every value of from's.
func castCanFail(from, to tensor.Dtype) bool {
	return graph.IsInteger(to) && from != to && !(from == graph.Int32 && to == graph.Int64)
}

// castFeed is x's values for a cast from one dtype to another: all of
// castValues when the cast cannot fail, else those in range.
func castFeed(t *testing.T, from, to tensor.Dtype) *tensor.Dense {
	t.Helper()
	v := castValues[from]
	var d *tensor.Dense
	var err error
	switch {
	case castCanFail(from, to):
		d, err = graph.FromFloat64s(from, v.inRange, len(v.inRange))
	case graph.IsInteger(from):
		d, err = graph.FromInt64s(from, v.ints, len(v.ints))
	default:
		d, err = graph.FromFloat64s(from, v.all, len(v.all))
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkExact runs y on the CPU and on every device and checks that the
// values are the same bits (any NaN matching any NaN; integers compared
// as float64, exact below 2^53 and to rounding above), and that the
// instructions of the ops named in onDevice ran on the device.
// (checkOnDevices compares to a tolerance, and takes two infinities of
// the same sign for different values.)
func checkExact(t *testing.T, y *graph.Node, feeds vm.Feeds, onDevice ...string) {
	t.Helper()
	prog, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	requireOps(t, prog, onDevice...)
	cpu, err := vm.New(prog, vm.WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := cpu.Run(feeds); err != nil {
		t.Fatal(err)
	}
	want, _ := cpu.Value(y)
	for _, dev := range testDevices(t) {
		m, err := vm.New(prog, vm.OnDevice(dev))
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if err := m.Run(feeds); err != nil {
			t.Fatalf("%v: %v", dev, err)
		}
		got, err := m.Value(y)
		if err != nil {
			t.Fatal(err)
		}
		for i := range y.Type().Size() {
			g, w := graph.Float(got, i), graph.Float(want, i)
			if math.Float64bits(g) != math.Float64bits(w) && !(math.IsNaN(g) && math.IsNaN(w)) {
				t.Errorf("%v: element %d is %v, want %v", dev, i, g, w)
			}
		}
		for i, in := range prog.Instructions() {
			if m.OnHost(i) && slices.Contains(onDevice, in.Name()) {
				t.Errorf("%v: %s ran on the host", dev, in.Name())
			}
		}
	}
}

// Every cast between the four dtypes gives the CPU's values exactly; the
// ones that cannot fail run on the device, float ones with their
// gradients.
func TestCastKernel(t *testing.T) {
	for _, from := range castDTypes {
		for _, to := range castDTypes {
			if from == to {
				continue
			}
			t.Run(fmt.Sprintf("%v to %v", from, to), func(t *testing.T) {
				g := graph.New()
				x := g.Input("x", from, castFeed(t, from, to).Shape()...)
				feeds := vm.Feeds{x: castFeed(t, from, to)}
				y := ops.Cast(x, to)
				var onDevice []string
				if !castCanFail(from, to) {
					onDevice = []string{"Cast"}
				}
				checkExact(t, y, feeds, onDevice...)
				if graph.IsFloat(from) && graph.IsFloat(to) {
					rng := rand.New(rand.NewPCG(1, 1))
					xf := opInput(t, g, feeds, rng, from, 3, 4)
					checkOpKernels(t, opGrads(t, g, feeds, rng, ops.Cast(xf, to), xf), feeds, "Cast")
				}
			})
		}
	}
}

// A cast that fails on the CPU on a value out of range (or NaN) fails on
// a device as well: it runs on the host there.
func TestCastOutOfRangeFails(t *testing.T) {
	for _, dev := range testDevices(t) {
		for _, c := range []struct {
			from, to tensor.Dtype
			bad      float64
		}{
			{graph.Float64, graph.Int32, 1 << 31}, {graph.Float32, graph.Int64, math.NaN()},
			{graph.Float64, graph.Int64, math.Inf(-1)}, {graph.Int64, graph.Int32, -1<<31 - 1},
		} {
			g := graph.New()
			x := g.Input("x", c.from, 2)
			prog, err := compile.Compile([]*graph.Node{ops.Cast(x, c.to)})
			if err != nil {
				t.Fatal(err)
			}
			m, err := vm.New(prog, vm.OnDevice(dev))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			feed, _ := graph.FromFloat64s(c.from, []float64{1, c.bad}, 2)
			if err := m.Run(vm.Feeds{x: feed}); err == nil || !strings.Contains(err.Error(), "range") {
				t.Errorf("%v: cast of %v from %v to %v: error %v, want one about the range", dev, c.bad, c.from, c.to, err)
			}
		}
	}
}
