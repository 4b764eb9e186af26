package ops_test

import (
	"math"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// A Bernoulli probability outside [0, 1] or NaN has no distribution: the
// draw there is NaN (PyTorch refuses such a p), in float32 and float64,
// while p in [0, 1] draws 0 or 1 (0 at p = ±0, 1 at p = 1); a machine
// with vm.WithNaNCheck fails the run, naming the line of the draw.
func TestRandomBernoulliOutOfRange(t *testing.T) {
	probs := []float64{-0.5, 1.5, math.NaN(), math.Inf(1), math.Inf(-1), -1e-300, 1 + 1e-15, 0, math.Copysign(0, -1), 1, 0.5, 1e-300}
	want := []float64{math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), 0, 0, 1, -1, -1} // -1: 0 or 1
	for _, dt := range []tensor.Dtype{graph.Float64, graph.Float32} {
		g := graph.New()
		pv, _ := graph.FromFloat64s(dt, probs, len(probs))
		if dt == graph.Float32 {
			graph.SetFloat(pv, 6, float64(math.Nextafter32(1, 2))) // 1 + 1e-15 rounds to 1 in float32
			graph.SetFloat(pv, 5, -float64(math.SmallestNonzeroFloat32))
			graph.SetFloat(pv, 11, float64(math.SmallestNonzeroFloat32))
		}
		p := g.Input("p", dt, len(probs))
		draw := ops.RandomBernoulli(g.Scalar(4, graph.Float64), ops.Stream{Seed: 9}, p)
		prog, err := compile.Compile([]*graph.Node{draw})
		if err != nil {
			t.Fatal(err)
		}
		m, err := vm.New(prog)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Run(vm.Feeds{p: pv}); err != nil {
			t.Fatal(err)
		}
		v, _ := m.Value(draw)
		got := graph.Float64s(v)
		for i, w := range want {
			ok := got[i] == w || math.IsNaN(w) && math.IsNaN(got[i]) || w == -1 && (got[i] == 0 || got[i] == 1)
			if !ok {
				t.Errorf("%v: p = %v: drew %v, want %v (-1: 0 or 1)", dt, graph.Float(pv, i), got[i], w)
			}
		}
		m.Close()
		checked, err := vm.New(prog, vm.WithNaNCheck())
		if err != nil {
			t.Fatal(err)
		}
		err = checked.Run(vm.Feeds{p: pv})
		if err == nil || !strings.Contains(err.Error(), "NaN") || !strings.Contains(err.Error(), "random_bernoulli_test.go:") {
			t.Errorf("%v: with WithNaNCheck, a p outside [0, 1]: got %v, want an error naming the NaN and the draw's line", dt, err)
		}
		checked.Close()
	}
}
