package nn

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// adamRun is an Adam machine training p on f(p) = Σ c_i p_i, c fed each
// step, so that the gradient is c (plus L2 decay's wd·p): two runs fed the
// same c differ only by their optimisers.
type adamRun struct {
	m      *vm.Machine
	c      *graph.Node
	p, mom *graph.Node
	sq     *graph.Node
	opt    *Adam
}

func newAdamRun(t *testing.T, opt *Adam, dtype graph.Type, start []float64) *adamRun {
	t.Helper()
	g := graph.New()
	init, err := graph.FromFloat64s(dtype.DType, start, len(start))
	require.NoError(t, err)
	p := g.Param("p", init)
	c := g.Input("c", dtype.DType, len(start))
	loss := ops.Sum(ops.Mul(c, p))
	updates, err := opt.Updates(loss, []Named{{"p", p}})
	require.NoError(t, err)
	r := &adamRun{m: machine(t, []*graph.Node{loss}, updates), c: c, p: p, opt: opt}
	r.mom, r.sq = lookup(opt.State(), "exp_avg.p"), lookup(opt.State(), "exp_avg_sq.p")
	return r
}

// step runs one step fed c and returns p, m and v after it.
func (r *adamRun) step(t *testing.T, c []float64) (p, m, v []float64) {
	t.Helper()
	cv, err := graph.FromFloat64s(r.c.DType(), c, len(c))
	require.NoError(t, err)
	require.NoError(t, r.m.Run(vm.Feeds{r.c: cv}))
	var out [3][]float64
	for i, n := range []*graph.Node{r.p, r.mom, r.sq} {
		x, err := r.m.Get(n)
		require.NoError(t, err)
		out[i] = graph.Float64s(x)
	}
	return out[0], out[1], out[2]
}

// adamDrift bounds, element by element, how far float32 moments take Adam
// from float64 Adam's trajectory given the same gradients c_t (see
// TestAdamFloat32Moments): it is fed the float64 run's values and returns
// the bounds on |m̃ - M|, |ṽ - V| and |p̃ - P| after each step.
type adamDrift struct {
	beta1, beta2, lr, eps, wd float64
	decoupled, fold           bool
	e, f, dp                  []float64 // the bounds so far
}

const (
	u32 = 0x1p-24 // float32's unit roundoff
	u64 = 0x1p-50 // float64's, generously: the float64 run's own rounding
)

// next advances the bounds by step t (from 1) of gradient c, from the
// float64 run's p, m and v before the step (p0, m0, v0) and after (p1, m1, v1).
func (d *adamDrift) next(t int, c, p0, m0, v0, p1, m1, v1 []float64) {
	u := u32
	tf := float64(t)
	c1, c2 := 1-d.beta1, 1-d.beta2
	stepSize, corr, eps := d.lr/(1-math.Pow(d.beta1, tf)), math.Sqrt(1-math.Pow(d.beta2, tf)), d.eps
	if d.fold { // the same step in exact arithmetic
		stepSize, eps, corr = stepSize*corr, eps*corr, 1
	}
	keep := 1.0
	if d.decoupled {
		keep = 1 - d.lr*d.wd
	}
	for i := range c {
		// The gradient: float64's G, and the float32 run's γ within ρ of it.
		G, rho := c[i], u*math.Abs(c[i])+u64*math.Abs(c[i])
		if !d.decoupled && d.wd != 0 {
			G = c[i] + p0[i]*d.wd
			rho = (1+u)*d.wd*d.dp[i]*(1+u64) + (u+u64)*(math.Abs(G)+d.wd*math.Abs(p0[i]))
		}
		aG := math.Abs(G)
		// m1 = fl(fl(β1·m) + fl((1-β1)·γ)), the scalars rounded to float32.
		t1 := d.beta1 * ((1+u)*(1+u)*d.e[i] + (3*u+u64)*math.Abs(m0[i]))
		t2 := c1 * ((1+u)*(1+u)*rho + (3*u+u64)*aG)
		d.e[i] = (1+u)*(t1+t2) + (u+u64)*math.Abs(m1[i])
		// v1 = fl(fl(β2·v) + fl(fl(γ·γ)·(1-β2))).
		t1 = d.beta2 * ((1+u)*(1+u)*d.f[i] + (3*u+u64)*v0[i])
		t2 = c2 * ((1+u)*(1+u)*(1+u)*(2*aG+rho)*rho + (4*u+u64)*G*G)
		d.f[i] = (1+u)*(t1+t2) + (u+u64)*v1[i]
		// The denominator D = √V/c + eps and the float32 run's within εD.
		root := math.Sqrt(v1[i])
		D := root/corr + eps
		r := math.Sqrt(d.f[i])
		if root > 0 {
			r = min(r, d.f[i]/root)
		}
		k := (1+u)*(1+u)/(1-u) - 1
		epsD := (1+u)*((r*(1+k)+root*k)/corr+(u+u64)*eps) + (u+u64)*D
		var dq float64 // |m̃/D̃ - M/D| after the division's rounding
		if epsD < D {
			q := math.Abs(m1[i]) / D
			dq = (1+u)*(d.e[i]+math.Abs(m1[i])*epsD/D)/(D-epsD) + (u+u64)*q
			step := stepSize * q
			dStep := stepSize * ((1+u)*(1+u)*dq + (3*u+u64)*q)
			d.dp[i] = keep*d.dp[i]*(1+u64) + dStep + 8*u64*(math.Abs(p1[i])+step+d.dp[i])
		} else {
			d.dp[i] = math.Inf(1) // no bound: the caller's data must avoid it
		}
	}
}

// TestAdamFloat32Moments: float32 moments keep Adam within a derived bound
// of float64 Adam. Both runs train f(p) = Σ c_t·p on the same gradients
// c_t (drawn, some decaying to 0 and changing sign), 300 steps, in the
// plain form, with L2 decay, AdamW's decay and FoldCorrection. Each step's
// bound (adamDrift) follows float32's rounding, a relative 2^-24 per
// operation, through the moments' recurrences (an error of m fades with
// β1, v's with β2), the square root, the divisions and the step, and adds
// the float64 run's own rounding; the gradient's difference with L2 decay
// is wd times the parameters' bound. The moments are float32 and the
// parameters drift (not bit for bit); the bound is below 2e-4 of the path's
// length (the float32 rounding of v, remembered over about 1/(1-β2) steps,
// dominates it), and the drift is within it at every step.
func TestAdamFloat32Moments(t *testing.T) {
	const n, steps = 40, 300
	for _, c := range []struct {
		name      string
		cfg       AdamConfig
		decoupled bool
	}{
		{"Adam", DefaultAdam().WithLR(0.01), false},
		{"Adam+L2", DefaultAdam().WithLR(0.01).WithWeightDecay(0.05), false},
		{"AdamW", DefaultAdam().WithLR(0.01).WithWeightDecay(0.1), true},
		{"fold", func() AdamConfig { c := DefaultAdam().WithLR(0.003); c.FoldCorrection = true; return c }(), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, 12))
			start := make([]float64, n)
			for i := range start {
				start[i] = rng.NormFloat64()
			}
			newOpt := NewAdam
			if c.decoupled {
				newOpt = NewAdamW
			}
			ref := newAdamRun(t, newOpt(c.cfg), graph.TypeOf(graph.Float64), start)
			cfg := c.cfg
			cfg.Float32Moments = true
			f32 := newAdamRun(t, newOpt(cfg), graph.TypeOf(graph.Float64), start)
			for _, b := range []*graph.Node{f32.mom, f32.sq} {
				require.Equal(t, graph.Float32, b.DType(), "the moments' dtype")
			}
			oc := ref.opt.cfg
			d := &adamDrift{beta1: oc.Beta1, beta2: oc.Beta2, lr: oc.LR, eps: oc.Eps, wd: oc.WeightDecay,
				decoupled: c.decoupled, fold: oc.FoldCorrection,
				e: make([]float64, n), f: make([]float64, n), dp: make([]float64, n)}
			p0, m0, v0 := start, make([]float64, n), make([]float64, n)
			var q1 []float64
			path, drift := make([]float64, n), 0.0
			scale := make([]float64, n)
			for i := range scale {
				scale[i] = math.Exp(rng.NormFloat64())
			}
			for step := 1; step <= steps; step++ {
				grad := make([]float64, n)
				for i := range grad {
					switch i % 4 {
					case 0: // fading to nothing
						grad[i] = scale[i] * math.Pow(0.97, float64(step)) * (1 + 0.1*rng.NormFloat64())
					case 1: // changing sign
						grad[i] = scale[i] * math.Sin(float64(step)/7+float64(i))
					default:
						grad[i] = scale[i] * rng.NormFloat64()
					}
				}
				p1, m1, v1 := ref.step(t, grad)
				q, mq, vq := f32.step(t, grad)
				q1 = q
				d.next(step, grad, p0, m0, v0, p1, m1, v1)
				for i := range n {
					path[i] += math.Abs(p1[i] - p0[i])
					drift = max(drift, math.Abs(q1[i]-p1[i]))
					if math.Abs(mq[i]-m1[i]) > d.e[i] || math.Abs(vq[i]-v1[i]) > d.f[i] || math.Abs(q1[i]-p1[i]) > d.dp[i] {
						t.Fatalf("step %d element %d: |m̃-M| %.3g (bound %.3g), |ṽ-V| %.3g (%.3g), |p̃-P| %.3g (%.3g)", step, i,
							math.Abs(mq[i]-m1[i]), d.e[i], math.Abs(vq[i]-v1[i]), d.f[i], math.Abs(q1[i]-p1[i]), d.dp[i])
					}
				}
				p0, m0, v0 = p1, m1, v1
			}
			worst, seen := 0.0, 0.0
			for i := range n {
				worst = max(worst, d.dp[i]/path[i])
				seen = max(seen, math.Abs(q1[i]-p0[i])/path[i])
			}
			if drift == 0 || worst > 2e-4 {
				t.Fatalf("largest drift %.3g: want some (the moments are float32); bound %.3g of the path, want below 2e-4", drift, worst)
			}
			t.Logf("largest drift %.3g, at most %.3g of the path's length at the end; the bound's %.3g", drift, seen, worst)
		})
	}
}

// Float32Moments changes nothing for float32 parameters: the same
// trajectory bit for bit, with float32 moments as ever.
func TestAdamFloat32MomentsLeaveFloat32Alone(t *testing.T) {
	start := []float64{0.5, -1, 2, 0.25}
	cfg := DefaultAdamW().WithLR(0.01)
	plain := newAdamRun(t, NewAdamW(cfg), graph.TypeOf(graph.Float32), start)
	cfg.Float32Moments = true
	opted := newAdamRun(t, NewAdamW(cfg), graph.TypeOf(graph.Float32), start)
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 20 {
		grad := []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), 0}
		p, m, v := plain.step(t, grad)
		q, mq, vq := opted.step(t, grad)
		require.Equal(t, [][]float64{p, m, v}, [][]float64{q, mq, vq}, "step %d", step)
	}
}

// Checkpoints hold float32 moments as float32 (F32) beside the float64
// parameter; loaded into the same optimiser the run continues bit for bit,
// and a checkpoint of the other moments' dtype does not load.
func TestCheckpointFloat32Moments(t *testing.T) {
	start := []float64{0.5, -1, 2, 0.25}
	grad := []float64{0.3, -0.2, 1, 0}
	runs := map[bool]*adamRun{}
	files := map[bool][]byte{}
	for _, f32 := range []bool{false, true} {
		cfg := DefaultAdam().WithLR(0.01)
		cfg.Float32Moments = f32
		r := newAdamRun(t, NewAdam(cfg), graph.TypeOf(graph.Float64), start)
		for range 3 {
			r.step(t, grad)
		}
		var buf bytes.Buffer
		require.NoError(t, Save(&buf, r.m, r.state()))
		runs[f32], files[f32] = r, buf.Bytes()
	}
	tensors, _, err := ReadSafetensors(bytes.NewReader(files[true]))
	require.NoError(t, err)
	for name, want := range map[string]graph.Type{"p": graph.TypeOf(graph.Float64, 4),
		"exp_avg.p": graph.TypeOf(graph.Float32, 4), "exp_avg_sq.p": graph.TypeOf(graph.Float32, 4), "step": graph.TypeOf(graph.Float64)} {
		require.Equal(t, want.DType, tensors[name].Dtype(), name)
	}

	cfg := DefaultAdam().WithLR(0.01)
	cfg.Float32Moments = true
	b := newAdamRun(t, NewAdam(cfg), graph.TypeOf(graph.Float64), start)
	require.NoError(t, Load(bytes.NewReader(files[true]), b.m, b.state()))
	for range 2 {
		p, m, v := runs[true].step(t, grad)
		q, mq, vq := b.step(t, grad)
		require.Equal(t, [][]float64{p, m, v}, [][]float64{q, mq, vq})
	}

	err = Load(bytes.NewReader(files[false]), b.m, b.state())
	var le *LoadError
	require.ErrorAs(t, err, &le)
	require.Len(t, le.Mismatched, 2, "%v", err)
	require.Contains(t, err.Error(), "exp_avg.p is float64(4) in the file, want float32(4)")
	require.Error(t, Load(bytes.NewReader(files[true]), runs[false].m, runs[false].state()))
}

// state is the run's checkpoint: p and the optimiser's state.
func (r *adamRun) state() []Named { return append([]Named{{"p", r.p}}, r.opt.State()...) }
