package bench

import (
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// W1 in Gorgonia: the same perceptron, started from the same parameter
// values, stepped by Gorgonia's tape machine and vanilla SGD solver.

// gorgoniaW1 builds m's network in Gorgonia from m's initial parameters
// (nn.Linear keeps its weight as (out, in); Gorgonia's layer multiplies by
// the transpose) and m's batch, with one-hot targets.
func gorgoniaW1(dtype tensor.Dtype, m *w1Model) (*gorgoniaMLP, error) {
	layers := make([]denseLayer, len(m.layers))
	for i, l := range m.layers {
		shape := l.Weight.Shape()
		out, in := shape[0], shape[1]
		layers[i] = denseLayer{in: in, out: out, w: transpose(graph.Float64s(l.Weight.Value()), out, in), b: graph.Float64s(l.Bias.Value())}
	}
	classes := layers[len(layers)-1].out
	target := make([]float64, len(m.classes)*classes)
	for i, c := range m.classes {
		target[i*classes+c] = 1
	}
	return buildGorgoniaNet(dtype, len(m.classes), m.xData, target, layers)
}

// transpose returns the (cols, rows) transpose of a (rows, cols) row-major
// matrix.
func transpose(a []float64, rows, cols int) []float64 {
	t := make([]float64, len(a))
	for i := range rows {
		for j := range cols {
			t[j*rows+i] = a[i*cols+j]
		}
	}
	return t
}

func benchGorgoniaW1(b *testing.B, dtype tensor.Dtype) {
	gm, err := gorgoniaW1(dtype, newW1Model(dtype, w1Sizes, w1Batch, 1))
	if err != nil {
		b.Fatal(err)
	}
	step := newGorgoniaSGD(b, gm, w1LR)
	defer step.close()
	b.ReportAllocs()
	warmUp(b, step.run)
	for b.Loop() {
		if err := step.run(); err != nil {
			b.Fatal(err)
		}
	}
	reportTime(b, 1e6, "ms/step")
}

// TestW1MatchesGorgonia checks that the two W1 steps do the same work: on a
// smaller network of the same form, one SGD step leaves the same parameters
// in nabla and in Gorgonia, and both start from the same loss.
func TestW1MatchesGorgonia(t *testing.T) {
	m := newW1Model(graph.Float64, []int{12, 8, 8, 3}, 5, 2)
	machine := m.machine(t, "sgd", 1)
	defer machine.Close()
	if err := machine.Run(m.feeds); err != nil {
		t.Fatal(err)
	}
	gm, err := gorgoniaW1(graph.Float64, m)
	if err != nil {
		t.Fatal(err)
	}
	step := newGorgoniaSGD(t, gm, w1LR)
	defer step.close()
	if err := step.run(); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "loss", []float64{loss(t, machine, m.loss)}, gorgoniaFloats(t, gm.loss.Value()), agreement)
	for i, l := range m.layers {
		shape := l.Weight.Shape()
		w, err := machine.Get(l.Weight)
		if err != nil {
			t.Fatal(err)
		}
		stepped := graph.Float64s(w)
		if moved := maxDifference(stepped, graph.Float64s(l.Weight.Value())); moved < 1e-6 {
			t.Errorf("%v: the step moved it by %v, want a real step", l.Weight.Name(), moved)
		}
		got := transpose(stepped, shape[0], shape[1])
		assertClose(t, "stepped "+l.Weight.Name(), got, gorgoniaFloats(t, gm.params[2*i].Value()), agreement)
		bias, err := machine.Get(l.Bias)
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, "stepped "+l.Bias.Name(), graph.Float64s(bias), gorgoniaFloats(t, gm.params[2*i+1].Value()), agreement)
	}
}
