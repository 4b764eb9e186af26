package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// sameBits describes the first element where got and want differ in
// their bits (any NaN matching any NaN), or returns "".
func sameBits(got, want *tensor.Dense) string {
	if !got.Shape().Eq(want.Shape()) || got.Dtype() != want.Dtype() {
		return fmt.Sprintf("%v%v, want %v%v", got.Dtype(), got.Shape(), want.Dtype(), want.Shape())
	}
	for i := range graph.ShapeSize(want.Shape()) {
		g, w := graph.Float(got, i), graph.Float(want, i)
		if math.Float64bits(g) != math.Float64bits(w) && !(math.IsNaN(g) && math.IsNaN(w)) {
			return fmt.Sprintf("element %d: %v (%#x), want %v (%#x)", i, g, math.Float64bits(g), w, math.Float64bits(w))
		}
	}
	return ""
}

// hostInstructions names the instructions of prog that m runs on the host.
func hostInstructions(prog *compile.Program, m *vm.Machine) []string {
	var host []string
	for i, in := range prog.Instructions() {
		if m.OnHost(i) {
			host = append(host, fmt.Sprintf("%s (%v)", in.Name(), in.Node))
		}
	}
	return host
}

// AdamM32 runs on the device, without a decay, with L2 decay and with
// AdamW's, with and without a correction, and its parameter and float32
// moments are the CPU's (vek.AdamM32's) bit for bit: over values whose
// float32 steps round (random ones), zeros of both signs, gradients that
// round to float32 subnormals or overflow to infinities, moments of 0.
func TestAdamM32OnDevice(t *testing.T) {
	devs := testDevices(t)
	const n = 37 // two AVX-512 blocks of 16 on the CPU, and a tail
	rng := rand.New(rand.NewPCG(3, 4))
	p, gr, m, v := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		p[i], gr[i] = rng.NormFloat64(), rng.NormFloat64()*math.Exp2(float64(rng.IntN(40)-20))
		m[i], v[i] = float64(float32(rng.NormFloat64()*0.1)), float64(float32(math.Abs(rng.NormFloat64())*0.01))
	}
	p[0], p[1], gr[1] = 0, math.Copysign(0, -1), 0
	gr[2], gr[3], gr[4] = math.Copysign(0, -1), 1e-42, -3e-45 // float32 subnormals
	gr[5], gr[6] = 1e39, -1e300                               // beyond float32: ±Inf
	m[7], v[7], gr[7] = 0, 0, 0
	m[8], v[8] = 0, 0
	f64 := func(x []float64, shape ...int) *tensor.Dense {
		d, _ := graph.FromFloat64s(graph.Float64, x, shape...)
		return d
	}
	f32 := func(x []float64) *tensor.Dense {
		d, _ := graph.FromFloat64s(graph.Float32, x, n)
		return d
	}
	for _, c := range []struct {
		beta1, beta2 float64
		corrected    bool
		decay        float64 // 0 for none
		decoupled    bool
	}{
		{0.9, 0.999, true, 0, false},
		{0.8, 0.99, false, 0, false},
		{0.9, 0.999, true, 0.01, false},
		{0.7, 0.95, false, 0.3, false},
		{0.9, 0.999, true, 0.999, true},
		{0.9, 0.999, false, 0.99, true},
	} {
		name := fmt.Sprintf("β %v %v, corrected %v, decay %v (decoupled %v)", c.beta1, c.beta2, c.corrected, c.decay, c.decoupled)
		g := graph.New()
		pn, gn := g.Input("p", graph.Float64, n), g.Input("g", graph.Float64, n)
		mn, vn := g.Input("m", graph.Float32, n), g.Input("v", graph.Float32, n)
		step, eps := g.Input("step", graph.Float64), g.Input("eps", graph.Float64)
		feeds := vm.Feeds{pn: f64(p, n), gn: f64(gr, n), mn: f32(m), vn: f32(v),
			step: f64([]float64{0.0123}), eps: f64([]float64{1e-8})}
		var corr, decay *graph.Node
		if c.corrected {
			corr = g.Input("corr", graph.Float64)
			feeds[corr] = f64([]float64{0.0316})
		}
		if c.decay != 0 {
			decay = g.Input("decay", graph.Float64)
			feeds[decay] = f64([]float64{c.decay})
		}
		p1, m1, v1 := ops.AdamM32(pn, gn, mn, vn, step, eps, corr, decay, c.beta1, c.beta2, c.decoupled)
		prog, err := compile.Compile([]*graph.Node{p1, m1, v1})
		if err != nil {
			t.Fatal(err)
		}
		for _, dev := range devs {
			cpu, dm := machines(t, prog, dev)
			if err := cpu.Run(feeds); err != nil {
				t.Fatal(err)
			}
			if err := dm.Run(feeds); err != nil {
				t.Fatalf("%s on %v: %v", name, dev, err)
			}
			for k, y := range []*graph.Node{p1, m1, v1} {
				want, _ := cpu.Value(y)
				got, err := dm.Value(y)
				if err != nil {
					t.Fatal(err)
				}
				if msg := sameBits(got, want); msg != "" {
					t.Errorf("%s on %v, output %d: %s", name, dev, k, msg)
				}
			}
			if host := hostInstructions(prog, dm); len(host) > 0 {
				t.Errorf("%s on %v: on the host: %v", name, dev, host)
			}
			cpu.Close()
			dm.Close()
		}
	}
}

// namedOptimizer is an optimiser of a test, made anew for each program.
type namedOptimizer struct {
	name string
	opt  func() nn.Optimizer
}

// float32MomentOptimizers are Adam with float32 moments
// (nn.AdamConfig.Float32Moments) in every form of ops.AdamM32: Adam, Adam
// with L2 decay and the correction folded into eps, and AdamW.
func float32MomentOptimizers() []namedOptimizer {
	f32 := func(cfg nn.AdamConfig) nn.AdamConfig {
		cfg.Float32Moments = true
		return cfg
	}
	folded := f32(nn.DefaultAdam().WithLR(0.01).WithWeightDecay(0.01))
	folded.FoldCorrection = true
	return []namedOptimizer{
		{"Adam", func() nn.Optimizer { return nn.NewAdam(f32(nn.DefaultAdam().WithLR(0.01))) }},
		{"Adam, L2 decay, folded correction", func() nn.Optimizer { return nn.NewAdam(folded) }},
		{"AdamW", func() nn.Optimizer { return nn.NewAdamW(f32(nn.DefaultAdamW().WithLR(0.01))) }},
	}
}

// W1's training step (at mlpStep's size) with float64 parameters and
// float32 moments (nn.AdamConfig.Float32Moments), by Adam, Adam with L2
// decay and a folded correction, and AdamW, runs wholly on the device:
// no instruction on the host, the parameters and moments the CPU's bit
// for bit, step after step (9 steps), and the loss the CPU's to 1e-12
// (its mean adds in another order on the device: it differs from the
// CPU's in the last bit at some steps).
func TestAdamFloat32MomentsOnDevice(t *testing.T) {
	devs := testDevices(t)
	for _, c := range float32MomentOptimizers() {
		prog, feeds := mlpStep(t, graph.Float64, c.opt())
		steps := 0
		for _, in := range prog.Instructions() {
			if in.Name() == "AdamM32" {
				steps++
			}
		}
		if steps != 6 { // three layers' weights and biases
			t.Fatalf("%s: %d AdamM32 steps, want 6", c.name, steps)
		}
		for _, dev := range devs {
			cpu, dm := machines(t, prog, dev)
			if host := hostInstructions(prog, dm); len(host) > 0 {
				t.Errorf("%s on %v: on the host: %v", c.name, dev, host)
			}
			for r, f := range append(append(feeds, feeds...), feeds...) {
				if err := cpu.Run(f); err != nil {
					t.Fatal(err)
				}
				if err := dm.Run(f); err != nil {
					t.Fatalf("%s on %v: %v", c.name, dev, err)
				}
				for _, y := range prog.Params() {
					want, _ := cpu.Value(y)
					got, err := dm.Value(y)
					if err != nil {
						t.Fatal(err)
					}
					if msg := sameBits(got, want); msg != "" {
						t.Fatalf("%s on %v, step %d, %v: %s", c.name, dev, r+1, y, msg)
					}
				}
				loss := prog.Outputs()[0]
				want, _ := cpu.Value(loss)
				got, _ := dm.Value(loss)
				if msg := closeTo(got, want, tolerance(graph.Float64)); msg != "" {
					t.Fatalf("%s on %v, step %d, the loss: %s", c.name, dev, r+1, msg)
				}
			}
			cpu.Close()
			dm.Close()
		}
	}
}
