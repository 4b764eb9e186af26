package nn

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// trainer builds a parameter p starting at init, the loss lossOf(p), and
// a machine whose every run is one step of opt.
func trainer(t *testing.T, opt Optimizer, init []float64, lossOf func(p *graph.Node) *graph.Node) (*vm.Machine, *graph.Node) {
	t.Helper()
	g := graph.New()
	p := g.Param("p", dense(t, init, len(init)))
	loss := lossOf(p)
	updates, err := opt.Updates(loss, []Named{{"p", p}})
	require.NoError(t, err)
	return machine(t, []*graph.Node{loss}, updates), p
}

func steps(t *testing.T, m *vm.Machine, p *graph.Node, n int) []float64 {
	t.Helper()
	for range n {
		require.NoError(t, m.Run(nil))
	}
	v, err := m.Get(p)
	require.NoError(t, err)
	return graph.Float64s(v)
}

// quadratic is f(p) = Σ a_i (p_i - c_i)², minimal at p = c.
func quadratic(p *graph.Node) *graph.Node {
	g := p.Graph()
	av, _ := graph.FromFloat64s(graph.Float64, []float64{1, 3, 0.5}, 3)
	cv, _ := graph.FromFloat64s(graph.Float64, []float64{1, -2, 3}, 3)
	a, c := g.Const(av), g.Const(cv)
	return ops.Sum(ops.Mul(a, ops.Square(ops.Sub(p, c))))
}

func TestOptimisersConvergeOnAQuadratic(t *testing.T) {
	start := []float64{5, 5, -5}
	for _, c := range []struct {
		name  string
		opt   Optimizer
		steps int
		want  []float64
	}{
		{"SGD", NewSGD(SGDConfig{LR: 0.1}), 300, []float64{1, -2, 3}},
		{"SGD momentum", NewSGD(SGDConfig{LR: 0.02, Momentum: 0.9}), 500, []float64{1, -2, 3}},
		{"SGD Nesterov", NewSGD(SGDConfig{LR: 0.02, Momentum: 0.9, Nesterov: true}), 500, []float64{1, -2, 3}},
		// With L2 decay the minimum of f + (wd/2)|p|² is where
		// 2a(p - c) + wd·p = 0: p = 2ac/(2a + wd), here wd = 1:
		// 2/3, -12/7, 3/2.
		{"SGD weight decay", NewSGD(SGDConfig{LR: 0.1, WeightDecay: 1}), 300, []float64{2.0 / 3, -12.0 / 7, 1.5}},
		{"Adam", NewAdam(DefaultAdam().WithLR(0.05)), 3000, []float64{1, -2, 3}},
		{"AdamW", NewAdamW(DefaultAdam().WithLR(0.05)), 3000, []float64{1, -2, 3}},
	} {
		m, p := trainer(t, c.opt, start, quadratic)
		got := steps(t, m, p, c.steps)
		assertClose(t, c.name, got, c.want, 1e-4)
	}
}

// Two steps of each SGD flavour on f(p) = p², gradient 2p, from p = 1 with
// LR 0.1 and momentum 0.9.
func TestSGDByHand(t *testing.T) {
	square := func(p *graph.Node) *graph.Node { return ops.Sum(ops.Square(p)) }
	for _, c := range []struct {
		name string
		cfg  SGDConfig
		want [2]float64
	}{
		// g = 2, p = 1 - 0.2 = 0.8; g = 1.6, p = 0.8 - 0.16 = 0.64.
		{"plain", SGDConfig{LR: 0.1}, [2]float64{0.8, 0.64}},
		// v = 2, p = 0.8; g = 1.6, v = 0.9·2 + 1.6 = 3.4, p = 0.8 - 0.34 = 0.46.
		{"momentum", SGDConfig{LR: 0.1, Momentum: 0.9}, [2]float64{0.8, 0.46}},
		// v = 2, step 2 + 0.9·2 = 3.8, p = 0.62; g = 1.24, v = 1.8 + 1.24
		// = 3.04, step 1.24 + 2.736 = 3.976, p = 0.62 - 0.3976 = 0.2224.
		{"Nesterov", SGDConfig{LR: 0.1, Momentum: 0.9, Nesterov: true}, [2]float64{0.62, 0.2224}},
	} {
		m, p := trainer(t, NewSGD(c.cfg), []float64{1}, square)
		assertClose(t, c.name+" step 1", steps(t, m, p, 1), c.want[:1], 1e-12)
		assertClose(t, c.name+" step 2", steps(t, m, p, 1), c.want[1:], 1e-12)
	}
}

// Three Adam steps on f(p) = Σ p², gradient 2p, from p = (1, -0.5) with
// LR 0.1, β1 0.9, β2 0.999, eps 1e-8, worked by hand for p[0]:
//
//	t=1: g = 2, m = 0.1·2 = 0.2, v = 0.001·4 = 0.004,
//	     1-β1¹ = 0.1, 1-β2¹ = 0.001, denominator √0.004/√0.001 + eps = 2 + 1e-8,
//	     p = 1 - (0.1/0.1)·0.2/(2+1e-8) = 0.9000000005
//	t=2: g = 1.800000001, m = 0.9·0.2 + 0.1·g = 0.3600000001,
//	     v = 0.999·0.004 + 0.001·g² = 0.0072360000036,
//	     1-β1² = 0.19, 1-β2² = 0.001999,
//	     p = 0.9000000005 - (0.1/0.19)·0.3600000001/(√0.0072360000036/√0.001999 + 1e-8)
//	       = 0.9000000005 - 0.5263157895·0.3600000001/1.9025817 = 0.80041222869
//	t=3: g = 1.60082445738, m = 0.9·0.3600000001 + 0.1·g = 0.48408244583,
//	     v = 0.999·0.0072360000036 + 0.001·g² = 0.00979140295,
//	     1-β1³ = 0.271, 1-β2³ = 0.002997001,
//	     p = 0.80041222869 - (0.1/0.271)·0.48408244583/(√0.00979140295/√0.002997001 + 1e-8)
//	       = 0.70158627295
//
// and likewise p[1]: -0.400000001, -0.30118742166, -0.20487125256.
//
// The literal AdamConfig{LR: 0.1} takes the same defaults.
func TestAdamByHand(t *testing.T) {
	for name, cfg := range map[string]AdamConfig{"DefaultAdam": DefaultAdam().WithLR(0.1), "literal": {LR: 0.1}} {
		m, p := trainer(t, NewAdam(cfg), []float64{1, -0.5}, func(p *graph.Node) *graph.Node {
			return ops.Sum(ops.Square(p))
		})
		for i, want := range [][]float64{
			{0.9000000005, -0.400000001},
			{0.8004122286917927, -0.3011874216591668},
			{0.7015862729460302, -0.2048712525602996},
		} {
			assertClose(t, name+" Adam step "+string(rune('1'+i)), steps(t, m, p, 1), want, 1e-10)
		}
	}
}

// With a loss whose gradient is zero, only weight decay moves the
// parameters. Adam folds L2 decay into the gradient, which its moments then
// normalise: every parameter moves by about LR, whatever its size. AdamW
// decays each parameter in proportion to it: p·(1 - LR·wd).
func TestAdamWDecouplesWeightDecay(t *testing.T) {
	flat := func(p *graph.Node) *graph.Node { return ops.Sum(ops.Scale(p, 0)) }
	cfg := DefaultAdam().WithLR(0.1)
	cfg.WeightDecay = 0.1

	m, p := trainer(t, NewAdam(cfg), []float64{1, 10}, flat)
	// g = 0.1·p: m̂ = 0.1·p, √v̂ = 0.1·|p|, step 0.1·sign(p).
	assertClose(t, "Adam with L2", steps(t, m, p, 1), []float64{0.9, 9.9}, 1e-6)

	m, p = trainer(t, NewAdamW(cfg), []float64{1, 10}, flat)
	// g = 0: no Adam step; p·(1 - 0.1·0.1) = 0.99·p.
	assertClose(t, "AdamW", steps(t, m, p, 1), []float64{0.99, 9.9}, 1e-12)
	assertClose(t, "AdamW step 2", steps(t, m, p, 1), []float64{0.99 * 0.99, 9.9 * 0.99}, 1e-12)
}

func TestOptimiserState(t *testing.T) {
	g := graph.New()
	l := NewLinear(g, "fc", 2, 3, true)
	x := g.Input("x", graph.Float64, 4, 2)
	loss := ops.Sum(l.Forward(x))
	opt := NewAdam(DefaultAdam())
	updates, err := opt.Updates(loss, NamedParameters(l))
	require.NoError(t, err)
	require.Equal(t, []string{"lr", "step", "exp_avg.weight", "exp_avg_sq.weight", "exp_avg.bias", "exp_avg_sq.bias"}, names(opt.State()))
	require.Len(t, updates, 2+5)
	for _, s := range opt.State()[1:] { // the learning rate is set, not updated
		require.Contains(t, updates, s.Node, s.Name)
	}
	require.Equal(t, []string{"opt.lr", "opt.step", "opt.exp_avg.weight"}, names(Prefix("opt", opt.State()))[:3])

	sgd := NewSGD(SGDConfig{LR: 0.1, Momentum: 0.5})
	_, err = sgd.Updates(loss, NamedParameters(l))
	require.NoError(t, err)
	require.Equal(t, []string{"lr", "momentum_buffer.weight", "momentum_buffer.bias"}, names(sgd.State()))
}

func TestOptimiserErrors(t *testing.T) {
	g := graph.New()
	used := g.Param("used", graph.NewDense(graph.Float64, 2))
	unused := g.Param("unused", graph.NewDense(graph.Float64, 2))
	stopped := g.Param("stopped", graph.NewDense(graph.Float64, 2))
	other := graph.New().Param("other", graph.NewDense(graph.Float64, 2))
	f32 := g.Param("f32", graph.NewDense(graph.Float32, 2))
	x := g.Input("x", graph.Float64, 2)
	loss := ops.Sum(ops.Add(ops.Square(used), ops.StopGradient(stopped)))
	loss = ops.Add(loss, ops.Sum(ops.Mul(x, used)))
	adam := func() Optimizer { return NewAdam(DefaultAdam()) }
	adamWith := func(edit func(*AdamConfig)) Optimizer {
		c := DefaultAdam()
		edit(&c)
		return NewAdam(c)
	}
	for _, c := range []struct {
		name   string
		opt    Optimizer
		loss   *graph.Node
		params []Named
		want   string
	}{
		{"no path", adam(), loss, []Named{{"layers.0.weight", used}, {"layers.1.bias", unused}}, `parameter "layers.1.bias" (built at optim_test.go:`},
		{"stopped", adam(), loss, []Named{{"s", stopped}}, "has no gradient"},
		{"not a parameter", adam(), loss, []Named{{"x", x}}, `"x"`},
		{"other graph", adam(), loss, []Named{{"o", other}}, "another graph"},
		{"dtypes", adam(), loss, []Named{{"u", used}, {"f", f32}}, "one optimiser serves one dtype"},
		{"twice", adam(), loss, []Named{{"a", used}, {"b", used}}, `"b" is also listed as "a"`},
		{"none", adam(), loss, nil, "no parameters"},
		{"not scalar", adam(), ops.Square(used), []Named{{"u", used}}, "not a scalar"},
		{"nil", adam(), loss, []Named{{"n", nil}}, "nil or poisoned"},
		{"SGD lr", NewSGD(SGDConfig{}), loss, []Named{{"u", used}}, "learning rate 0"},
		{"SGD momentum", NewSGD(SGDConfig{LR: 1, Momentum: 1}), loss, []Named{{"u", used}}, "momentum 1"},
		{"SGD Nesterov", NewSGD(SGDConfig{LR: 1, Nesterov: true}), loss, []Named{{"u", used}}, "Nesterov"},
		{"Adam beta", adamWith(func(c *AdamConfig) { c.Beta2 = 1.5 }), loss, []Named{{"u", used}}, "beta2 1.5 is not in [0, 1)"},
		{"Adam beta 1", adamWith(func(c *AdamConfig) { c.Beta1 = 1 }), loss, []Named{{"u", used}}, "beta1 1 is not in [0, 1)"},
		{"Adam negative beta", adamWith(func(c *AdamConfig) { c.Beta1 = -0.1 }), loss, []Named{{"u", used}}, "beta1 -0.1"},
		{"Adam zero lr", NewAdam(AdamConfig{}), loss, []Named{{"u", used}}, "learning rate 0"},
		{"Adam NaN eps", adamWith(func(c *AdamConfig) { c.Eps = math.NaN() }), loss, []Named{{"u", used}}, "eps NaN"},
		{"AdamW decay", NewAdamW(AdamConfig{LR: 1, WeightDecay: -1}), loss, []Named{{"u", used}}, "AdamW: eps"},
		{"SGD infinite decay", NewSGD(SGDConfig{LR: 1, WeightDecay: math.Inf(1)}), loss, []Named{{"u", used}}, "weight decay +Inf"},
		{"negative clip", NewSGD(SGDConfig{LR: 1, Clip: Clipping{MaxNorm: -1}}), loss, []Named{{"u", used}}, "clipping norm -1"},
		{"NaN clip", adamWith(func(c *AdamConfig) { c.Clip.MaxValue = math.NaN() }), loss, []Named{{"u", used}}, "value NaN"},
	} {
		_, err := c.opt.Updates(c.loss, c.params)
		require.ErrorContains(t, err, c.want, "case %s", c.name)
	}
	opt := adam()
	first, err := opt.Updates(loss, []Named{{"u", used}})
	require.NoError(t, err)
	state := len(opt.State())
	again, err := opt.Updates(loss, []Named{{"u", used}})
	require.NoError(t, err)
	require.Len(t, opt.State(), state, "a second Updates shares the state of the first")
	for b := range first {
		require.Contains(t, again, b, "the second step updates the same buffers")
	}
	g2 := graph.New()
	u2 := g2.Param("u", graph.NewDense(graph.Float64))
	_, err = opt.Updates(ops.Sum(u2), []Named{{"u", u2}})
	require.ErrorContains(t, err, "another graph than the one the optimiser serves")
	_, err = TrainingUpdates(nil, loss, ReLU{})
	require.ErrorContains(t, err, "must not be nil")
}

// One run of a training program (forward, backward, Adam step, dropout
// counter) allocates nothing after the first.
func TestTrainingStepAllocatesNothing(t *testing.T) {
	s := newSetup(t, 1)
	require.NoError(t, s.m.Run(s.feeds))
	allocs := testing.AllocsPerRun(20, func() { _ = s.m.Run(s.feeds) })
	require.Zero(t, allocs)
}

// SetLR changes the step of the same compiled program: p² from 1 with
// SGD at 0.1 goes to 0.8, then at 0.25 to 0.8 - 0.25·1.6 = 0.4.
func TestSetLR(t *testing.T) {
	opt := NewSGD(SGDConfig{LR: 0.1})
	require.ErrorContains(t, opt.SetLR(nil, 1), "before Updates")
	m, p := trainer(t, opt, []float64{1}, func(p *graph.Node) *graph.Node { return ops.Sum(ops.Square(p)) })
	prog := m.Program()
	assertClose(t, "step at 0.1", steps(t, m, p, 1), []float64{0.8}, 1e-15)
	require.NoError(t, opt.SetLR(m, 0.25))
	assertClose(t, "step at 0.25", steps(t, m, p, 1), []float64{0.4}, 1e-15)
	require.Same(t, prog, m.Program())
	require.ErrorContains(t, opt.SetLR(m, -1), "must be positive")

	adam := NewAdam(DefaultAdam().WithLR(0.1))
	m, p = trainer(t, adam, []float64{1}, func(p *graph.Node) *graph.Node { return ops.Sum(ops.Square(p)) })
	require.NoError(t, adam.SetLR(m, 0.2))
	// Adam's first step is lr·sign(g) (up to eps): 1 - 0.2.
	assertClose(t, "Adam at 0.2", steps(t, m, p, 1), []float64{0.8}, 1e-7)
}

// Clipping by value clamps each element; by norm, rescales all gradients
// by MaxNorm/(‖g‖+1e-6). For Σp² at p = (3, 4), g = (6, 8) and ‖g‖ = 10.
func TestClipping(t *testing.T) {
	sq := func(p *graph.Node) *graph.Node { return ops.Sum(ops.Square(p)) }
	m, p := trainer(t, NewSGD(SGDConfig{LR: 1, Clip: Clipping{MaxValue: 1}}), []float64{3, 4}, sq)
	assertClose(t, "by value", steps(t, m, p, 1), []float64{2, 3}, 0)
	m, p = trainer(t, NewSGD(SGDConfig{LR: 1, Clip: Clipping{MaxNorm: 5}}), []float64{3, 4}, sq)
	coef := 5 / (10 + 1e-6)
	assertClose(t, "by norm", steps(t, m, p, 1), []float64{3 - 6*coef, 4 - 8*coef}, 1e-15)
	m, p = trainer(t, NewSGD(SGDConfig{LR: 1, Clip: Clipping{MaxNorm: 50}}), []float64{3, 4}, sq)
	assertClose(t, "norm below the limit", steps(t, m, p, 1), []float64{-3, -4}, 1e-15)
}

// A frozen layer keeps its weights while the rest trains; skipping
// disconnected parameters names them instead of failing.
func TestFrozenAndDisconnected(t *testing.T) {
	g := graph.New()
	first := NewLinear(g, "first", 2, 3, true)
	second := NewLinear(g, "second", 3, 1, true)
	unused := NewLinear(g, "unused", 2, 2, false)
	model := NewSequential("model", first, Tanh{}, second, unused)
	x := g.Input("x", graph.Float64, 4, 2)
	loss := ops.Sum(ops.Square(second.Forward(ops.Tanh(first.Forward(x)))))

	_, err := TrainingUpdates(NewSGD(SGDConfig{LR: 0.1}), loss, model)
	require.ErrorContains(t, err, "no gradient path")

	var skipped []string
	updates, err := TrainingUpdates(NewSGD(SGDConfig{LR: 0.1}), loss, model, Frozen(first), SkipDisconnected(&skipped))
	require.NoError(t, err)
	require.Equal(t, []string{"unused.weight"}, skipped)
	m := machine(t, []*graph.Node{loss}, updates)
	before := func(n *graph.Node) []float64 {
		v, err := m.Get(n)
		require.NoError(t, err)
		return graph.Float64s(v)
	}
	w1, w2 := before(first.Weight), before(second.Weight)
	xv := graph.NewDense(graph.Float64, 4, 2)
	for i := range xv.Float64s() {
		xv.Float64s()[i] = float64(i) / 4
	}
	for range 3 {
		require.NoError(t, m.Run(vm.Feeds{x: xv}))
	}
	require.Equal(t, w1, before(first.Weight), "the frozen layer is unchanged")
	require.NotEqual(t, w2, before(second.Weight), "the other layer trains")
	for _, p := range NamedParameters(first) {
		require.NotContains(t, updates, p.Node, "no update for a frozen parameter")
	}
}

// A parameter without a gradient path is named with where it was built
// and where the step was asked for, and the error says how to skip it.
func TestNoGradientPathError(t *testing.T) {
	g := graph.New()
	used := NewLinear(g, "used", 2, 1, false)
	_, _, line, _ := runtime.Caller(0)
	unused := NewLinear(g, "unused", 2, 1, false) // line+1
	model := NewSequential("model", used, unused)
	loss := ops.Sum(used.Forward(g.Input("x", graph.Float64, 3, 2)))
	_, err := TrainingUpdates(NewAdam(AdamConfig{LR: 0.1}), loss, model) // line+4
	require.EqualError(t, err, fmt.Sprintf(`nn: Adam: parameter "unused.weight" (built at optim_test.go:%d) has no gradient path to the loss: `+
		`to train only the parameters that reach it, pass nn.SkipDisconnected(&skipped) to nn.TrainingUpdates, which names those it leaves out in skipped `+
		`(or leave its module out with nn.Frozen) (called at optim_test.go:%d)`, line+1, line+4))
	var skipped []string
	_, err = TrainingUpdates(NewAdam(AdamConfig{LR: 0.1}), loss, model, SkipDisconnected(&skipped))
	require.NoError(t, err)
	require.Equal(t, []string{"unused.weight"}, skipped)
}

// A nil optimiser, or a nil loss, is an error, not a panic.
func TestNilOptimiser(t *testing.T) {
	g := graph.New()
	p := g.Param("p", graph.NewDense(graph.Float64, 2))
	var adam *Adam
	var sgd *SGD
	_, err := adam.Updates(ops.Sum(p), []Named{{"p", p}})
	require.ErrorContains(t, err, "nn: Adam: Updates on a nil *Adam: make it with nn.NewAdam (called at optim_test.go:")
	_, err = sgd.Updates(ops.Sum(p), []Named{{"p", p}})
	require.ErrorContains(t, err, "nn: SGD: Updates on a nil *SGD")
	_, err = TrainingUpdates(adam, ops.Sum(p), ReLU{})
	require.ErrorContains(t, err, "Updates on a nil *Adam")
	require.Nil(t, adam.State())
	require.Nil(t, sgd.State())
	require.ErrorContains(t, adam.SetLR(nil, 1), "SetLR on a nil *Adam")
	require.ErrorContains(t, sgd.SetWeightDecay(nil, 1), "SetWeightDecay on a nil *SGD")
	_, err = NewAdam(DefaultAdam()).Updates(nil, []Named{{"p", p}})
	require.ErrorContains(t, err, "nn: Adam: the loss is nil")
	_, err = TrainingUpdates(NewSGD(SGDConfig{LR: 1}), nil, ReLU{})
	require.ErrorContains(t, err, "must not be nil")
}
