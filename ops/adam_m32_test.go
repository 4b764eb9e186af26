package ops

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/parallel"
	"github.com/nabla-go/nabla/internal/kernel/vek"
)

// AdamM32's kernel, run by one thread or split over three, in place or
// into fresh buffers, gives vek.AdamM32's elements bit for bit, with
// every decay and with and without a correction.
func TestAdamM32Threads(t *testing.T) {
	const n = 40003 // parts of 2,720 elements, and a remainder
	rng := rand.New(rand.NewPCG(1, 2))
	f64 := func() []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return x
	}
	f32 := func() []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(math.Abs(rng.NormFloat64()))
		}
		return x
	}
	p, g, m, v := f64(), f64(), f32(), f32()
	for _, op := range []adamM32Op{{0.9, 0.999, true, vek.NoDecay}, {0.8, 0.99, false, vek.L2Decay}, {0.9, 0.999, true, vek.DecoupledDecay}} {
		k := vek.AdamScalars[float64]{Beta1: op.beta1, OneMinusBeta1: 1 - op.beta1, Beta2: op.beta2, OneMinusBeta2: 1 - op.beta2,
			StepSize: 0.01, Correction: 1, Eps: 1e-8, Mode: op.mode}
		scalars := []float64{k.StepSize, k.Eps}
		if op.corrected {
			k.Correction = 0.3
			scalars = append(scalars, k.Correction)
		}
		if op.mode != vek.NoDecay {
			k.Decay = 0.999
			scalars = append(scalars, k.Decay)
		}
		wp, wm, wv := make([]float64, n), make([]float32, n), make([]float32, n)
		vek.AdamM32(wp, wm, wv, p, g, m, v, &k)
		pool := parallel.New(3)
		defer pool.Close()
		for _, e := range []*graph.Exec{nil, graph.NewExec(pool)} {
			for _, inPlace := range []bool{false, true} {
				in := []*tensor.Dense{
					tensor.New(tensor.WithShape(n), tensor.WithBacking(append([]float64(nil), p...))),
					tensor.New(tensor.WithShape(n), tensor.WithBacking(g)),
					tensor.New(tensor.WithShape(n), tensor.WithBacking(append([]float32(nil), m...))),
					tensor.New(tensor.WithShape(n), tensor.WithBacking(append([]float32(nil), v...))),
				}
				for _, s := range scalars {
					in = append(in, tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{s})))
				}
				out := []*tensor.Dense{in[0], in[2], in[3]}
				if !inPlace {
					out = []*tensor.Dense{tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(n)),
						tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(n)), tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(n))}
				}
				if err := op.ForwardExec(e, out, in); err != nil {
					t.Fatal(err)
				}
				gp, gm, gv := out[0].Float64s(), out[1].Float32s(), out[2].Float32s()
				for i := range n {
					if math.Float64bits(gp[i]) != math.Float64bits(wp[i]) || gm[i] != wm[i] || gv[i] != wv[i] {
						t.Fatalf("%+v, %d threads, in place %v: element %d: got %v %v %v, want %v %v %v",
							op, e.Threads(), inPlace, i, gp[i], gm[i], gv[i], wp[i], wm[i], wv[i])
					}
				}
			}
		}
	}
}

// AdamM32 refuses a float32 parameter, moments of another dtype or shape
// and scalars of several elements, naming what it got.
func TestAdamM32Types(t *testing.T) {
	for _, c := range []struct {
		p, m, s []int // dtype (32 or 64) and shape
		want    string
	}{
		{[]int{32, 3}, []int{32, 3}, []int{64}, "the parameter is float32, want float64"},
		{[]int{64, 3}, []int{64, 3}, []int{64}, "m is float64(3), want float32(3)"},
		{[]int{64, 3}, []int{32, 4}, []int{64}, "m is float32(4), want float32(3)"},
		{[]int{64, 3}, []int{32, 3}, []int{64, 2}, "scalar input 4 is float64(2), want a float64 of one element"},
	} {
		g := graph.New()
		param := func(name string, spec []int) *graph.Node {
			return g.Param(name, graph.NewDense(map[int]tensor.Dtype{32: graph.Float32, 64: graph.Float64}[spec[0]], spec[1:]...))
		}
		p, m, v, s := param("p", c.p), param("m", c.m), param("v", []int{32, 3}), param("s", c.s)
		eps := g.Scalar(1e-8, graph.Float64)
		p1, _, _ := AdamM32(p, p, m, v, s, eps, nil, nil, 0.9, 0.999, false)
		if err := p1.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error with %q", err, c.want)
		}
	}
}

// AdamM32's GPU kernel refuses (the step then runs on the host) betas
// beyond float32's finite values and types Types refuses or outputs of
// other types, naming them; it has one kernel of one item an element.
func TestAdamM32CUDATypes(t *testing.T) {
	f64, f32 := graph.TypeOf(graph.Float64, 5), graph.TypeOf(graph.Float32, 5)
	s := graph.TypeOf(graph.Float64)
	in := []graph.Type{f64, f64, f32, f32, s, s}
	out := []graph.Type{f64, f32, f32}
	ok := adamM32Op{beta1: 0.9, beta2: 0.999}
	if srcs, err := ok.CUDA(in, out); err != nil || len(srcs) != 1 || srcs[0].N != 5 {
		t.Fatalf("got %v, %v, want one kernel of 5 items", srcs, err)
	}
	for _, c := range []struct {
		op      adamM32Op
		in, out []graph.Type
		want    string
	}{
		{adamM32Op{beta1: math.Inf(1), beta2: 0.999}, in, out, "β1 +Inf or β2 0.999 beyond float32's finite values"},
		{adamM32Op{beta1: 0.9, beta2: 1e300}, in, out, "β1 0.9 or β2 1e+300 beyond float32's finite values"},
		{adamM32Op{beta1: 0.9, beta2: math.NaN()}, in, out, "β1 0.9 or β2 NaN beyond float32's finite values"},
		{ok, []graph.Type{f64, f64, f64, f32, s, s}, out, "AdamM32: m is float64(5), want float32(5)"},
		{ok, in, out[:2], "AdamM32: 2 output types for 3 outputs"},
		{ok, in, []graph.Type{f64, f32, f64}, "AdamM32: output 2's type float64(5), want float32(5)"},
	} {
		if _, err := c.op.CUDA(c.in, c.out); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error with %q", c.op, err, c.want)
		}
	}
}
