package nn

import (
	"math"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// AdamConfig configures Adam and AdamW. A zero field takes PyTorch's
// default, so the literal Go users write is torch.optim.Adam's call:
// nn.NewAdam(nn.AdamConfig{LR: 3e-3}) has betas 0.9 and 0.999 and eps
// 1e-8, and nn.NewAdamW(nn.AdamConfig{LR: 3e-3}) also has AdamW's weight
// decay 0.01. The learning rate has no default: it must be positive.
//
// A zero that is meant is given with a With method, which marks the field
// as given: AdamConfig{LR: 0.1}.WithBetas(0, 0) has betas 0, WithEps(0) no
// eps, and WithWeightDecay(0) makes an AdamW without decay. DefaultAdam and
// DefaultAdamW give every field, so a field of theirs set to 0 is 0.
type AdamConfig struct {
	LR    float64 // learning rate, > 0 (PyTorch's default 1e-3)
	Beta1 float64 // decay of the first moment, in [0, 1); 0 unless given is 0.9
	Beta2 float64 // decay of the second moment, in [0, 1); 0 unless given is 0.999
	Eps   float64 // added to the denominator, ≥ 0; 0 unless given is 1e-8
	// WeightDecay is L2 regularisation for Adam (added to the gradient,
	// so it is rescaled by the moments) and decoupled decay for AdamW
	// (p ← p·(1 - LR·WeightDecay), beside the Adam step). 0 unless given
	// is 0 for Adam and 0.01 for AdamW.
	WeightDecay float64
	// Clip limits the gradients before the step.
	Clip Clipping
	// FoldCorrection computes the step in the form of Kingma & Ba's
	// "more efficient" order (section 2), folding the second moment's
	// bias correction c2 = √(1-β2^t) into the step size and eps:
	//
	//	p ← p - (lr/(1-β1^t)·c2) · m / (√v + eps·c2)
	//
	// the same step in exact arithmetic with one division per element
	// fewer (about a quarter less time for the step's arithmetic with
	// AVX2; about 5% with AVX-512, whose kernel divides by c2 without
	// the divider in PyTorch's form too; see bench/README.md), but not
	// PyTorch's bits: the parameters differ from its by rounding, in the
	// last places; the moments keep its bits. False (the default) keeps
	// PyTorch's arithmetic.
	FoldCorrection bool
	// Float32Moments keeps the moments m and v of float64 parameters in
	// float32, which halves their memory and the step's traffic: the
	// gradient (with L2 decay added, in float64) is rounded to float32,
	// and m, v and the step lr/(1-β1^t)·m/(√v/√(1-β2^t) + eps) are float32
	// Adam's arithmetic (its scalars rounded to float32); the parameter,
	// float64, loses that step in float64 (after AdamW's decay, in
	// float64). With AVX-512 the step is one pass that takes about 60%
	// of the float64 step's time in W1 (see bench/README.md); a machine
	// on a GPU runs it as one kernel of the same operations, each
	// rounded to nearest by itself (no multiply-adds): from the same
	// gradients, the CPU's bits (ops.AdamM32's kernel). Not PyTorch's
	// bits:
	// each float32 operation rounds by up to 2^-24 (6e-8) of its result,
	// so each update differs from float64 Adam's by a few times that,
	// relative, and the moments' rounding is remembered over about
	// 1/(1-β1) and 1/(1-β2) steps. In TestAdamFloat32Moments (300 steps,
	// the same gradients) the parameters end within 5.3e-7 of the
	// distance they travelled of float64 Adam's, and within a bound
	// derived from those roundings at every step (at most 2.2e-5 of that
	// distance, 1.3e-4 with L2 decay, whose gradient feels the
	// parameters' difference). Checkpoints save the moments as float32
	// (F32), and a checkpoint with float64 moments does not load into
	// them (Load reports the dtypes' mismatch), nor the reverse. Float32
	// parameters are unaffected.
	Float32Moments bool

	given adamFields // the fields whose zero is meant
}

// adamFields marks fields of an AdamConfig as given.
type adamFields uint8

const (
	givenBeta1 adamFields = 1 << iota
	givenBeta2
	givenEps
	givenWeightDecay
	givenAll = givenBeta1 | givenBeta2 | givenEps | givenWeightDecay
)

// DefaultAdam returns PyTorch's defaults for Adam, every field given: LR
// 1e-3, betas 0.9 and 0.999, eps 1e-8, no weight decay (also when it
// configures AdamW), no clipping. Change the fields you need:
//
//	cfg := nn.DefaultAdam()
//	cfg.WeightDecay = 1e-4
//	opt := nn.NewAdam(cfg)
func DefaultAdam() AdamConfig {
	return AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, given: givenAll}
}

// DefaultAdamW returns PyTorch's defaults for AdamW, every field given:
// DefaultAdam's with weight decay 0.01.
func DefaultAdamW() AdamConfig { return DefaultAdam().WithWeightDecay(0.01) }

// WithLR returns c with learning rate lr: nn.NewAdam(nn.DefaultAdam().WithLR(0.01)).
func (c AdamConfig) WithLR(lr float64) AdamConfig {
	c.LR = lr
	return c
}

// WithBetas returns c with the moments' decays beta1 and beta2, given even
// when 0: nn.AdamConfig{LR: 0.01}.WithBetas(0, 0.99).
func (c AdamConfig) WithBetas(beta1, beta2 float64) AdamConfig {
	c.Beta1, c.Beta2 = beta1, beta2
	c.given |= givenBeta1 | givenBeta2
	return c
}

// WithEps returns c with eps, given even when 0.
func (c AdamConfig) WithEps(eps float64) AdamConfig {
	c.Eps = eps
	c.given |= givenEps
	return c
}

// WithWeightDecay returns c with weight decay wd, given even when 0 (an
// AdamW without decay).
func (c AdamConfig) WithWeightDecay(wd float64) AdamConfig {
	c.WeightDecay = wd
	c.given |= givenWeightDecay
	return c
}

// withDefaults returns c with PyTorch's default in each zero field not
// given, AdamW's when decoupled.
func (c AdamConfig) withDefaults(decoupled bool) AdamConfig {
	decay := 0.0
	if decoupled {
		decay = 0.01
	}
	for _, f := range []struct {
		v     *float64
		field adamFields
		def   float64
	}{{&c.Beta1, givenBeta1, 0.9}, {&c.Beta2, givenBeta2, 0.999}, {&c.Eps, givenEps, 1e-8}, {&c.WeightDecay, givenWeightDecay, decay}} {
		if *f.v == 0 && c.given&f.field == 0 {
			*f.v = f.def
		}
	}
	c.given = givenAll
	return c
}

// Adam is the Adam optimiser (Kingma & Ba), or AdamW (Loshchilov &
// Hutter) with decoupled weight decay. Its state is a step count t and, per
// parameter, the moments m and v:
//
//	t ← t+1
//	m ← β1·m + (1-β1)·g
//	v ← β2·v + (1-β2)·g²
//	p ← p - lr/(1-β1^t) · m / (√v/√(1-β2^t) + eps)
//
// which is PyTorch's arithmetic, step for step (AdamConfig.FoldCorrection
// and AdamConfig.Float32Moments trade it for speed).
type Adam struct {
	cfg       AdamConfig
	decoupled bool
	state     []Named
	graph     *graph.Graph // the graph of the first Updates
	rates
}

// NewAdam returns an Adam optimiser, the zero fields of cfg not given
// taking PyTorch's defaults (see AdamConfig); its configuration is
// checked by Updates.
func NewAdam(cfg AdamConfig) *Adam { return &Adam{cfg: cfg.withDefaults(false)} }

// NewAdamW returns an AdamW optimiser: Adam with decoupled weight decay,
// the zero fields of cfg not given taking PyTorch's defaults for AdamW
// (weight decay 0.01).
func NewAdamW(cfg AdamConfig) *Adam { return &Adam{cfg: cfg.withDefaults(true), decoupled: true} }

func (o *Adam) name() string {
	if o.decoupled {
		return "AdamW"
	}
	return "Adam"
}

// Updates returns the Adam step of every parameter, of its moments
// ("exp_avg.<param name>", "exp_avg_sq.<param name>") and of the step count
// ("step").
func (o *Adam) Updates(loss *graph.Node, params []Named) (map[*graph.Node]*graph.Node, error) {
	return o.updatesWith(loss, params, nil)
}

func (o *Adam) updatesWith(loss *graph.Node, params []Named, transform GradientTransform) (map[*graph.Node]*graph.Node, error) {
	if o == nil {
		return nil, nilOptimizer("Adam", "Updates")
	}
	c := o.cfg
	if !(c.LR > 0) || math.IsInf(c.LR, 0) {
		return nil, optimError(o.name(), "learning rate %v is not in (0, +Inf): set LR (PyTorch's default is 1e-3, as in nn.DefaultAdam())", c.LR)
	}
	for _, f := range []struct {
		what string
		v    float64
	}{{"beta1", c.Beta1}, {"beta2", c.Beta2}} {
		if !(f.v >= 0 && f.v < 1) {
			return nil, optimError(o.name(), "%s %v is not in [0, 1)", f.what, f.v)
		}
	}
	if !(c.Eps >= 0) || !(c.WeightDecay >= 0) || math.IsInf(c.Eps+c.WeightDecay, 0) {
		return nil, optimError(o.name(), "eps %v and weight decay %v must be finite and ≥ 0", c.Eps, c.WeightDecay)
	}
	s, err := begin(o.name(), &o.graph, loss, params, c.Clip, transform)
	if err != nil {
		return nil, err
	}
	defer s.end()
	lr := s.scalarBuffer(&o.state, "lr", c.LR)
	o.lr = lr
	step := s.scalarBuffer(&o.state, "step", 0)
	t := ops.Add(step, s.scalar(1))
	s.updates[step] = t
	// The bias corrections are shared by every parameter.
	correction1 := ops.Sub(s.scalar(1), ops.Pow(s.scalar(c.Beta1), t))
	correction2 := ops.Sqrt(ops.Sub(s.scalar(1), ops.Pow(s.scalar(c.Beta2), t)))
	stepSize := ops.Div(lr, correction1)
	var foldedEps *graph.Node // eps·c2, shared, with FoldCorrection
	if c.FoldCorrection {
		stepSize, foldedEps = ops.Mul(stepSize, correction2), ops.Mul(s.scalar(c.Eps), correction2)
	}
	wd := o.decayBuffer(s, &o.state, c.WeightDecay)
	var keep *graph.Node // AdamW's decay factor, 1 - lr·wd
	if o.decoupled && wd != nil {
		keep = ops.Sub(s.scalar(1), ops.Mul(lr, wd))
	}
	for i, p := range params {
		if c.Float32Moments && s.dtype == graph.Float64 {
			o.float32Step(s, p, s.grads[i], stepSize, correction2, foldedEps, wd, keep)
			continue
		}
		g, base := s.grads[i], p.Node
		if o.decoupled {
			if keep != nil {
				base = ops.Mul(base, keep)
			}
		} else {
			g = s.decay(p.Node, g, wd)
		}
		m := s.buffer(&o.state, "exp_avg", p)
		v := s.buffer(&o.state, "exp_avg_sq", p)
		m1 := ops.Add(ops.Scale(m, c.Beta1), ops.Scale(g, 1-c.Beta1))
		v1 := ops.Add(ops.Scale(v, c.Beta2), ops.Scale(ops.Square(g), 1-c.Beta2))
		root, eps := ops.Sqrt(v1), foldedEps
		if eps == nil { // PyTorch's form, as it always was built
			root, eps = ops.Div(root, correction2), s.scalar(c.Eps)
		}
		denom := ops.Add(root, eps)
		s.updates[m], s.updates[v] = m1, v1
		s.updates[p.Node] = ops.Sub(base, ops.Mul(stepSize, ops.Div(m1, denom)))
	}
	return s.finish()
}

// State returns the learning rate, the step count and the moments.
func (o *Adam) State() []Named {
	if o == nil {
		return nil
	}
	return o.state
}

// SetLR sets the learning rate the machine's next steps use, without
// recompiling: a schedule calls it between runs.
func (o *Adam) SetLR(m ParamStore, lr float64) error {
	if o == nil {
		return nilOptimizer("Adam", "SetLR")
	}
	return o.setLR(o.name(), m, lr)
}

// SetWeightDecay sets the weight decay the machine's next steps use,
// without recompiling (an optimiser built with a weight decay of 0 has
// none to set).
func (o *Adam) SetWeightDecay(m ParamStore, wd float64) error {
	if o == nil {
		return nilOptimizer("Adam", "SetWeightDecay")
	}
	return o.setWeightDecay(o.name(), m, wd)
}

// float32Step adds the update of float64 parameter p with gradient g and
// float32 moments (AdamConfig.Float32Moments): one ops.AdamM32 with the
// step size, the second moment's bias correction (nil when folded into
// foldedEps), L2 decay wd or AdamW's factor keep.
func (o *Adam) float32Step(s *stepBuilder, p Named, g, stepSize, correction2, foldedEps, wd, keep *graph.Node) {
	m := s.bufferOf(&o.state, "exp_avg", p, graph.Float32)
	v := s.bufferOf(&o.state, "exp_avg_sq", p, graph.Float32)
	eps, decay := foldedEps, wd
	if eps == nil {
		eps = s.scalar(o.cfg.Eps)
	} else {
		correction2 = nil
	}
	if o.decoupled {
		decay = keep
	}
	p1, m1, v1 := ops.AdamM32(p.Node, g, m, v, stepSize, eps, correction2, decay, o.cfg.Beta1, o.cfg.Beta2, o.decoupled)
	s.updates[p.Node], s.updates[m], s.updates[v] = p1, m1, v1
}
