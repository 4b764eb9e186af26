package cuda

import (
	"math"
	"slices"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// The random ops' kernels draw what the CPU draws from the same counters,
// bit for bit: uniforms, integers, float32 and float64 normals,
// categorical draws (logits of very different sizes, a -Inf one, rows of
// one class, rows of no distribution: a NaN or +Inf logit, all -Inf),
// permutations and gamma draws (concentrations from 2⁻⁹ to 2¹⁰, and
// invalid ones); they run on the device, and a second run, after the
// generator's step advanced, again matches.
func TestRandomKernels(t *testing.T) {
	onDevice := []string{"RandomUniform", "RandomNormal", "RandomInt", "RandomCategorical", "RandomPermutation", "RandomGamma"}
	for _, dev := range testDevices(t) {
		g := graph.New()
		gen := ops.NewGenerator(g, "rng", 0x0123456789abcdef)
		x := g.Input("x", graph.Float32, 3, 7)
		logits := graph.NewDense(graph.Float64, 301, 5)
		for i := range logits.Size() {
			graph.SetFloat(logits, i, math.Sin(float64(i))*float64(i%7)*3)
		}
		graph.SetFloat(logits, 3, math.Inf(-1))
		// Rows without a distribution, which draw NaN: a NaN logit, a
		// +Inf one, all -Inf.
		graph.SetFloat(logits, 5*7+2, math.NaN())
		graph.SetFloat(logits, 5*8+4, math.Inf(1))
		for j := range 5 {
			graph.SetFloat(logits, 5*9+j, math.Inf(-1))
		}
		logits32 := graph.NewDense(graph.Float32, 13, 1)
		conc := graph.NewDense(graph.Float64, 2, 500)
		for i := range conc.Size() {
			graph.SetFloat(conc, i, math.Ldexp(1+float64(i%13)/13, i%19-9)) // 2⁻⁹ to 2¹⁰
		}
		graph.SetFloat(conc, 7, 0)
		graph.SetFloat(conc, 8, -1)
		graph.SetFloat(conc, 9, math.Inf(1))
		conc32 := graph.NewDense(graph.Float32, 257)
		for i := range conc32.Size() {
			graph.SetFloat(conc32, i, 0.01+float64(i)/16)
		}
		// Bernoulli probabilities in [0, 1] and outside it (NaN, ±∞,
		// below 0, above 1), which draw NaN.
		probs := graph.NewDense(graph.Float64, 2, 101)
		for i := range probs.Size() {
			graph.SetFloat(probs, i, float64(i%23)/22)
		}
		for i, p := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -0.25, 1.25, -1e-300, 1 + 1e-15, math.Copysign(0, -1)} {
			graph.SetFloat(probs, 7*i+3, p)
		}
		probs32 := graph.NewDense(graph.Float32, 203)
		for i := range probs32.Size() {
			graph.SetFloat(probs32, i, float64(i%11)/10-float64(i%3)*0.2)
		}
		graph.SetFloat(probs32, 5, math.NaN())
		outputs := []*graph.Node{
			gen.Bernoulli(g.Const(probs)), gen.Bernoulli(g.Const(probs32)),
			gen.Uniform(graph.Float32, 1001), gen.Uniform(graph.Float64, 1001),
			gen.Normal(graph.Float32, 1003), gen.UniformLike(x),
			gen.Int(-5, 1<<40, graph.Int64, 9), gen.Int(-3, 5, graph.Int32, 11), gen.Int(0, 1000, graph.Float32, 7),
			gen.Normal(graph.Float64, 1001),
			gen.Categorical(g.Const(logits)), gen.Categorical(g.Const(logits32)),
			gen.Permutation(1000, graph.Int64), gen.Permutation(37, graph.Float32),
			gen.Gamma(g.Const(conc)), gen.Gamma(g.Const(conc32)),
		}
		prog, err := compile.Compile(outputs, compile.WithUpdates(gen.Updates()))
		if err != nil {
			t.Fatal(err)
		}
		cpu, m := machines(t, prog, dev)
		defer m.Close()
		feeds := vm.Feeds{x: graph.NewDense(graph.Float32, 3, 7)}
		for run := range 2 {
			if err := cpu.Run(feeds); err != nil {
				t.Fatal(err)
			}
			if err := m.Run(feeds); err != nil {
				t.Fatalf("%v: %v", dev, err)
			}
			for k, n := range outputs {
				want, err := cpu.Value(n)
				if err != nil {
					t.Fatal(err)
				}
				got, err := m.Value(n)
				if err != nil {
					t.Fatal(err)
				}
				for i := range n.Type().Size() {
					g, w := graph.Float(got, i), graph.Float(want, i)
					if math.Float64bits(g) != math.Float64bits(w) {
						t.Fatalf("%v: run %d, output %d (%v), element %d: got %v, want %v", dev, run, k, n, i, g, w)
					}
				}
			}
		}
		for i, in := range prog.Instructions() {
			if m.OnHost(i) && slices.Contains(onDevice, in.Name()) {
				t.Errorf("%v: %s ran on the host", dev, in.Name())
			}
		}
	}
}
