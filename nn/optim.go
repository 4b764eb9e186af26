package nn

import (
	"fmt"
	"maps"
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Optimizer turns a loss into parameter updates: graph expressions for each
// parameter's next value (and its own state's), which compile.WithUpdates
// compiles into the training program, so that one Run does the forward
// pass, the backward pass and the optimiser step.
//
// Its state (moments, step count) is buffers: parameters of the graph that
// are not trained and live in the machine like the model's own.
type Optimizer interface {
	// Updates differentiates loss, a scalar, with respect to params and
	// returns param ← next value for each of them and for the optimiser's
	// state. It fails, naming the parameter, if one has no gradient path to
	// the loss. An optimiser builds its updates once.
	Updates(loss *graph.Node, params []Named) (map[*graph.Node]*graph.Node, error)
	// State returns the optimiser's buffers with their names (after
	// Updates), for checkpoints.
	State() []Named
}

// TrainingUpdates returns everything a training program updates: opt's
// updates of m's parameters to decrease loss, and m's own buffer updates
// (see StateUpdates). Pass them to compile.WithUpdates.
func TrainingUpdates(opt Optimizer, loss *graph.Node, m Module) (map[*graph.Node]*graph.Node, error) {
	if opt == nil || m == nil {
		return nil, fmt.Errorf("nn: TrainingUpdates: the optimiser and the module must not be nil")
	}
	updates, err := opt.Updates(loss, NamedParameters(m))
	if err != nil {
		return nil, err
	}
	maps.Copy(updates, StateUpdates(m))
	return updates, nil
}

// SGDConfig configures stochastic gradient descent.
type SGDConfig struct {
	// LR is the learning rate; it must be positive.
	LR float64
	// Momentum in [0, 1) keeps a velocity v ← momentum·v + g per parameter
	// and steps along it (PyTorch's formulation, without dampening).
	Momentum float64
	// Nesterov steps along g + momentum·v instead (needs Momentum).
	Nesterov bool
	// WeightDecay adds WeightDecay·p to each gradient (L2 regularisation).
	WeightDecay float64
}

// SGD is stochastic gradient descent: p ← p - lr·g, with optional momentum
// and weight decay.
type SGD struct {
	cfg   SGDConfig
	state []Named
	built bool
}

// NewSGD returns an SGD optimiser; its configuration is checked by Updates.
func NewSGD(cfg SGDConfig) *SGD { return &SGD{cfg: cfg} }

// Updates returns the SGD step of every parameter and, with momentum, of its
// velocity buffer ("momentum_buffer.<param name>").
func (o *SGD) Updates(loss *graph.Node, params []Named) (map[*graph.Node]*graph.Node, error) {
	c := o.cfg
	switch {
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return nil, fmt.Errorf("nn: SGD: learning rate %v must be positive", c.LR)
	case !(c.Momentum >= 0 && c.Momentum < 1):
		return nil, fmt.Errorf("nn: SGD: momentum %v is not in [0, 1)", c.Momentum)
	case c.Nesterov && c.Momentum == 0:
		return nil, fmt.Errorf("nn: SGD: Nesterov momentum needs a momentum above 0")
	case !(c.WeightDecay >= 0):
		return nil, fmt.Errorf("nn: SGD: weight decay %v must be ≥ 0", c.WeightDecay)
	}
	s, err := begin("SGD", &o.built, loss, params)
	if err != nil {
		return nil, err
	}
	defer s.end()
	for i, p := range params {
		g := s.decay(p.Node, s.grads[i], c.WeightDecay)
		if c.Momentum != 0 {
			v := s.buffer(&o.state, "momentum_buffer", p)
			v1 := ops.Add(ops.Scale(v, c.Momentum), g)
			s.updates[v] = v1
			if c.Nesterov {
				g = ops.Add(g, ops.Scale(v1, c.Momentum))
			} else {
				g = v1
			}
		}
		s.updates[p.Node] = ops.Sub(p.Node, ops.Scale(g, c.LR))
	}
	return s.finish()
}

// State returns the velocity buffers (none without momentum).
func (o *SGD) State() []Named { return o.state }

// AdamConfig configures Adam and AdamW. A zero field takes the default
// given beside it.
type AdamConfig struct {
	LR    float64 // learning rate; default 1e-3
	Beta1 float64 // decay of the first moment, in [0, 1); default 0.9
	Beta2 float64 // decay of the second moment, in [0, 1); default 0.999
	Eps   float64 // added to the denominator; default 1e-8
	// WeightDecay is L2 regularisation for Adam (added to the gradient,
	// so it is rescaled by the moments) and decoupled decay for AdamW
	// (p ← p·(1 - LR·WeightDecay), beside the Adam step). Default 0.
	WeightDecay float64
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
// which is PyTorch's arithmetic, step for step.
type Adam struct {
	cfg       AdamConfig
	decoupled bool
	state     []Named
	built     bool
}

// NewAdam returns an Adam optimiser; its configuration is checked by
// Updates.
func NewAdam(cfg AdamConfig) *Adam { return &Adam{cfg: withAdamDefaults(cfg)} }

// NewAdamW returns an AdamW optimiser: Adam with decoupled weight decay.
func NewAdamW(cfg AdamConfig) *Adam {
	return &Adam{cfg: withAdamDefaults(cfg), decoupled: true}
}

func withAdamDefaults(c AdamConfig) AdamConfig {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.LR, 1e-3)
	def(&c.Beta1, 0.9)
	def(&c.Beta2, 0.999)
	def(&c.Eps, 1e-8)
	return c
}

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
	c := o.cfg
	for _, f := range []struct {
		what   string
		v      float64
		lo, hi float64
	}{{"learning rate", c.LR, 0, math.Inf(1)}, {"beta1", c.Beta1, 0, 1}, {"beta2", c.Beta2, 0, 1}} {
		if !(f.v > f.lo && f.v < f.hi) {
			return nil, fmt.Errorf("nn: %s: %s %v is not in (%v, %v)", o.name(), f.what, f.v, f.lo, f.hi)
		}
	}
	if !(c.Eps >= 0) || !(c.WeightDecay >= 0) || math.IsInf(c.Eps+c.WeightDecay, 0) {
		return nil, fmt.Errorf("nn: %s: eps %v and weight decay %v must be finite and ≥ 0", o.name(), c.Eps, c.WeightDecay)
	}
	s, err := begin(o.name(), &o.built, loss, params)
	if err != nil {
		return nil, err
	}
	defer s.end()
	step := s.scalarBuffer(&o.state, "step")
	t := ops.Add(step, s.scalar(1))
	s.updates[step] = t
	// The bias corrections are shared by every parameter.
	correction1 := ops.Sub(s.scalar(1), ops.Pow(s.scalar(c.Beta1), t))
	correction2 := ops.Sqrt(ops.Sub(s.scalar(1), ops.Pow(s.scalar(c.Beta2), t)))
	stepSize := ops.Div(s.scalar(c.LR), correction1)
	for i, p := range params {
		g, base := s.grads[i], p.Node
		if o.decoupled {
			if c.WeightDecay != 0 {
				base = ops.Scale(base, 1-c.LR*c.WeightDecay)
			}
		} else {
			g = s.decay(p.Node, g, c.WeightDecay)
		}
		m := s.buffer(&o.state, "exp_avg", p)
		v := s.buffer(&o.state, "exp_avg_sq", p)
		m1 := ops.Add(ops.Scale(m, c.Beta1), ops.Scale(g, 1-c.Beta1))
		v1 := ops.Add(ops.Scale(v, c.Beta2), ops.Scale(ops.Square(g), 1-c.Beta2))
		denom := ops.Add(ops.Div(ops.Sqrt(v1), correction2), s.scalar(c.Eps))
		s.updates[m], s.updates[v] = m1, v1
		s.updates[p.Node] = ops.Sub(base, ops.Mul(stepSize, ops.Div(m1, denom)))
	}
	return s.finish()
}

// State returns the step count and the moments.
func (o *Adam) State() []Named { return o.state }

// stepBuilder is what every optimiser's Updates shares: the checked
// request, the gradients, and the updates being built.
type stepBuilder struct {
	name    string
	g       *graph.Graph
	dtype   tensor.Dtype
	grads   []*graph.Node
	updates map[*graph.Node]*graph.Node
	end     func()
}

// begin checks an Updates request and differentiates the loss. The
// optimiser's nodes are built in a scope named after it, for DOT.
func begin(name string, built *bool, loss *graph.Node, params []Named) (*stepBuilder, error) {
	if *built {
		return nil, fmt.Errorf("nn: %s: Updates was already called: an optimiser serves one training program", name)
	}
	if p := graph.Poisoned(loss); p != nil {
		return nil, p.Err()
	}
	if err := loss.Graph().Err(); err != nil {
		return nil, err
	}
	if !loss.Type().IsScalar() {
		return nil, fmt.Errorf("nn: %s: the loss %v is not a scalar", name, loss)
	}
	if len(params) == 0 {
		return nil, fmt.Errorf("nn: %s: no parameters to optimise", name)
	}
	g := loss.Graph()
	reaches := ancestors(loss)
	seen := map[*graph.Node]string{}
	nodes := make([]*graph.Node, len(params))
	for i, p := range params {
		n := p.Node
		switch {
		case n == nil || n.Err() != nil:
			return nil, fmt.Errorf("nn: %s: parameter %q is nil or poisoned", name, p.Name)
		case n.Kind() != graph.KindParam:
			return nil, fmt.Errorf("nn: %s: %q (%v) is not a parameter", name, p.Name, n)
		case n.Graph() != g:
			return nil, fmt.Errorf("nn: %s: parameter %q belongs to another graph than the loss", name, p.Name)
		case n.DType() != params[0].Node.DType():
			return nil, fmt.Errorf("nn: %s: parameter %q is %v but %q is %v: one optimiser serves one dtype",
				name, p.Name, n.DType(), params[0].Name, params[0].Node.DType())
		case seen[n] != "":
			return nil, fmt.Errorf("nn: %s: parameter %q is also listed as %q", name, p.Name, seen[n])
		case n.ID() >= len(reaches) || !reaches[n.ID()]:
			return nil, fmt.Errorf("nn: %s: parameter %q has no gradient path to the loss", name, p.Name)
		}
		seen[n] = p.Name
		nodes[i] = n
	}
	grads, err := compile.Grad(loss, nodes...)
	if err != nil {
		return nil, fmt.Errorf("nn: %s: %w", name, err)
	}
	*built = true
	return &stepBuilder{
		name: name, g: g, dtype: params[0].Node.DType(), grads: grads,
		updates: map[*graph.Node]*graph.Node{},
		end:     g.Scope(name),
	}, nil
}

// ancestors marks, by node ID, the nodes y depends on (y included).
func ancestors(y *graph.Node) []bool {
	reaches := make([]bool, y.ID()+1)
	reaches[y.ID()] = true
	nodes := y.Graph().Nodes()
	for id := y.ID(); id >= 0; id-- {
		if reaches[id] {
			for _, in := range nodes[id].Inputs() {
				reaches[in.ID()] = true
			}
		}
	}
	return reaches
}

func (s *stepBuilder) scalar(v float64) *graph.Node { return s.g.Scalar(v, s.dtype) }

// decay adds L2 weight decay wd·p to the gradient g.
func (s *stepBuilder) decay(p, g *graph.Node, wd float64) *graph.Node {
	if wd == 0 {
		return g
	}
	return ops.Add(g, ops.Scale(p, wd))
}

// buffer adds a zero buffer shaped like p, recorded in state as
// "kind.<p's name>".
func (s *stepBuilder) buffer(state *[]Named, kind string, p Named) *graph.Node {
	name := join(kind, p.Name)
	b := s.g.Param(s.name+"."+name, graph.NewDense(s.dtype, p.Node.Shape()...))
	*state = append(*state, Named{Name: name, Node: b})
	return b
}

// scalarBuffer adds a zero scalar buffer named name.
func (s *stepBuilder) scalarBuffer(state *[]Named, name string) *graph.Node {
	b := s.g.Param(s.name+"."+name, graph.NewDense(s.dtype))
	*state = append(*state, Named{Name: name, Node: b})
	return b
}

// finish returns the updates, or the first error building them recorded.
func (s *stepBuilder) finish() (map[*graph.Node]*graph.Node, error) {
	if err := s.g.Err(); err != nil {
		return nil, err
	}
	return s.updates, nil
}
