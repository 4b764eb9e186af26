package cuda

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// wide draws from a normal distribution of deviation 30, so that
// exponentials underflow and a shift by the maximum matters.
func wide(r *rand.Rand) float64 { return 30 * r.NormFloat64() }

// Softmax and LogSoftmax along any axis, and their gradients, run on the
// device and give the CPU's values.
func TestSoftmaxKernels(t *testing.T) {
	cases := []struct {
		shape []int
		axis  int
	}{
		{[]int{7}, 0}, {[]int{1}, 0},
		{[]int{5, 6}, 1}, {[]int{5, 6}, 0}, {[]int{5, 6}, -1},
		{[]int{4, 1}, 1}, {[]int{1, 5}, 0},
		{[]int{3, 4, 5}, 0}, {[]int{3, 4, 5}, 1}, {[]int{3, 4, 5}, 2},
		{[]int{2, 70}, 1},
	}
	for _, dtype := range floatTypes {
		for _, log := range []bool{false, true} {
			name, f := "Softmax", ops.Softmax
			if log {
				name, f = "LogSoftmax", ops.LogSoftmax
			}
			t.Run(fmt.Sprintf("%v/%s", dtype, name), func(t *testing.T) {
				c := newKernelCase(5)
				for _, s := range cases {
					for _, gen := range []func(*rand.Rand) float64{normal, smallInts, wide} {
						x := c.input(dtype, s.shape, gen)
						c.withGrad(t, f(x, s.axis), x)
					}
				}
				c.check(t, name)
			})
		}
	}
}

// Softmax and LogSoftmax of rows holding infinities, NaN and values far
// apart give the CPU's values.
func TestSoftmaxKernelsSpecialValues(t *testing.T) {
	inf := math.Inf(1)
	rows := [][]float64{
		{-inf, 1, 2, -inf},
		{-inf, -inf, -inf, -inf},
		{inf, 1, 2, 3},
		{1, math.NaN(), 2, 3},
		{1000, -1000, 0, 999},
		{1e-30, 0, -1e-30, 0},
	}
	for _, dtype := range floatTypes {
		t.Run(fmt.Sprint(dtype), func(t *testing.T) {
			c := newKernelCase(1)
			x := c.rows(dtype, rows)
			for _, axis := range []int{0, 1} {
				c.outputs = append(c.outputs, ops.Softmax(x, axis), ops.LogSoftmax(x, axis))
			}
			c.check(t, "Softmax", "LogSoftmax")
		})
	}
}

// CrossEntropy with int32, int64 and float labels, and its gradient
// (Softmax, OneHot), run on the device and give the CPU's values.
func TestCrossEntropyKernel(t *testing.T) {
	shapes := [][2]int{{7, 5}, {1, 1}, {3, 1}, {1, 4}, {4, 70}}
	for _, dtype := range floatTypes {
		for _, ldtype := range []tensor.Dtype{graph.Int32, graph.Int64, dtype} {
			t.Run(fmt.Sprintf("%v/%v", dtype, ldtype), func(t *testing.T) {
				c := newKernelCase(9)
				for _, s := range shapes {
					for _, gen := range []func(*rand.Rand) float64{normal, wide} {
						logits := c.input(dtype, s[:], gen)
						labels := c.labels(ldtype, s[:1], classesBelow(s[1]))
						c.withGrad(t, ops.CrossEntropy(logits, labels), logits)
					}
				}
				c.check(t, "CrossEntropy", "Softmax", "OneHot")
			})
		}
	}
}

// CrossEntropyOneHot against one-hot rows and distributions, and its
// gradients in both inputs, run on the device and give the CPU's values;
// a -Inf logit where the target is 0 adds nothing.
func TestCrossEntropyOneHotKernel(t *testing.T) {
	shapes := [][2]int{{7, 5}, {1, 1}, {3, 1}, {1, 4}, {4, 70}}
	for _, dtype := range floatTypes {
		t.Run(fmt.Sprint(dtype), func(t *testing.T) {
			c := newKernelCase(11)
			for _, s := range shapes {
				logits := c.input(dtype, s[:], wide)
				probs := c.input(dtype, s[:], func(r *rand.Rand) float64 { return float64(r.IntN(3)) / 2 })
				c.withGrad(t, ops.CrossEntropyOneHot(logits, probs), logits, probs)
				oneHot := c.labels(graph.Int64, s[:1], classesBelow(s[1]))
				c.withGrad(t, ops.CrossEntropyOneHot(logits, ops.OneHot(oneHot, s[1], dtype)), logits)
			}
			inf := math.Inf(1)
			logits := c.rows(dtype, [][]float64{{-inf, 1, 2}, {3, -inf, -inf}, {1000, -1000, 0}})
			target := c.rows(dtype, [][]float64{{0, 0.5, 0.5}, {1, 0, 0}, {0.25, 0, 0.75}})
			c.outputs = append(c.outputs, ops.CrossEntropyOneHot(logits, target))
			c.check(t, "CrossEntropyOneHot", "Softmax", "LogSoftmax")
		})
	}
}

// OneHot of int32, int64 and float labels of any shape, into float32 and
// float64 rows, runs on the device and gives the CPU's values.
func TestOneHotKernel(t *testing.T) {
	for _, dtype := range floatTypes {
		for _, ldtype := range []tensor.Dtype{graph.Int32, graph.Int64, graph.Float32, graph.Float64} {
			t.Run(fmt.Sprintf("%v/%v", dtype, ldtype), func(t *testing.T) {
				c := newKernelCase(13)
				for _, s := range []struct {
					shape   []int
					classes int
				}{{[]int{7}, 5}, {[]int{1}, 1}, {[]int{2, 3}, 4}, {[]int{3}, 70}} {
					labels := c.labels(ldtype, s.shape, classesBelow(s.classes))
					c.outputs = append(c.outputs, ops.OneHot(labels, s.classes, dtype))
				}
				c.check(t, "OneHot")
			})
		}
	}
}

// A label that is not a class index fails the run on the device as on the
// CPU, with an error naming the op, and gives NaN there: the example's
// loss, the one-hot row.
func TestBadLabelsKernels(t *testing.T) {
	for _, ldtype := range []tensor.Dtype{graph.Int32, graph.Int64, graph.Float64} {
		c := newKernelCase(1)
		logits := c.input(graph.Float64, []int{4, 3}, normal)
		bad := []float64{1, -1, 3, 2}
		if graph.IsFloat(ldtype) {
			bad[3] = 0.5
		}
		labels := c.labels(ldtype, []int{4}, seq(bad))
		loss, rows := ops.CrossEntropy(logits, labels), ops.OneHot(labels, 3, graph.Float64)
		prog, err := compile.Compile([]*graph.Node{loss, rows})
		if err != nil {
			t.Fatal(err)
		}
		for _, dev := range testDevices(t) {
			m, err := vm.New(prog, vm.OnDevice(dev))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			good := maps.Clone(c.feeds)
			good[labels], _ = graph.FromFloat64s(ldtype, []float64{0, 1, 2, 0}, 4)
			checkFault(t, dev, m, good, c.feeds, loss, "CrossEntropy", "OneHot")
			for i, in := range prog.Instructions() {
				if m.OnHost(i) {
					t.Errorf("%v: %v: %s ran on the host", dev, ldtype, in.Name())
				}
			}
			l, _ := m.Value(loss)
			r, _ := m.Value(rows)
			for i, b := range bad {
				_, ok := math.Modf(b)
				valid := b >= 0 && b < 3 && ok == 0
				if got := graph.Float(l, i); math.IsNaN(got) == valid {
					t.Errorf("%v: %v: label %v: loss %v", dev, ldtype, b, got)
				}
				for j := range 3 {
					want := 0.0
					if !valid {
						want = math.NaN()
					} else if int(b) == j {
						want = 1
					}
					if got := graph.Float(r, i*3+j); !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
						t.Errorf("%v: %v: label %v: one-hot[%d] = %v, want %v", dev, ldtype, b, j, got, want)
					}
				}
			}
		}
	}
}
