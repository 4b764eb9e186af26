package nn

import (
	"errors"
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
func TrainingUpdates(opt Optimizer, loss *graph.Node, m Module, opts ...TrainingOption) (map[*graph.Node]*graph.Node, error) {
	if opt == nil || m == nil || loss == nil {
		return nil, optimError("TrainingUpdates", "the optimiser, the loss and the module must not be nil")
	}
	var cfg trainingConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	params, err := cfg.trainable(loss, NamedParameters(m))
	if err != nil {
		return nil, err
	}
	updates, err := cfg.updates(opt, loss, params)
	if err != nil {
		return nil, err
	}
	maps.Copy(updates, StateUpdates(m))
	return updates, nil
}

// TrainingOption adjusts which parameters TrainingUpdates trains.
type TrainingOption func(*trainingConfig)

type trainingConfig struct {
	frozen    []Module
	skipped   *[]string         // where SkipDisconnected reports, or nil to fail
	transform GradientTransform // from TransformGradients, or nil
}

// Frozen leaves the parameters of the given modules (layers of the model,
// say) out of training, as PyTorch's requires_grad=False does: no
// gradient is computed for them and the optimiser does not update them.
func Frozen(modules ...Module) TrainingOption {
	return func(c *trainingConfig) { c.frozen = append(c.frozen, modules...) }
}

// SkipDisconnected trains only the parameters with a gradient path to the
// loss, as PyTorch leaves parameters without a gradient alone, and sets
// *skipped to the names of the others. Without it, such a parameter is an
// error.
func SkipDisconnected(skipped *[]string) TrainingOption {
	return func(c *trainingConfig) {
		if skipped == nil {
			skipped = new([]string)
		}
		c.skipped = skipped
	}
}

// trainable filters params by the options.
func (c trainingConfig) trainable(loss *graph.Node, params []Named) ([]Named, error) {
	frozen := map[*graph.Node]bool{}
	for _, m := range c.frozen {
		if m == nil {
			return nil, optimError("TrainingUpdates", "Frozen: a module is nil")
		}
		for _, p := range NamedParameters(m) {
			frozen[p.Node] = true
		}
	}
	var reaches []bool
	if c.skipped != nil {
		*c.skipped = nil
		if graph.Poisoned(loss) == nil {
			reaches = loss.Graph().Ancestors([]*graph.Node{loss})
		}
	}
	kept := params[:0:0]
	for _, p := range params {
		switch {
		case frozen[p.Node]:
		case reaches != nil && (p.Node.ID() >= len(reaches) || !reaches[p.Node.ID()] || p.Node.Graph() != loss.Graph()):
			*c.skipped = append(*c.skipped, p.Name)
		default:
			kept = append(kept, p)
		}
	}
	return kept, nil
}

// SGDConfig configures stochastic gradient descent. A zero field is
// PyTorch's default for torch.optim.SGD (no momentum, no Nesterov, no
// weight decay, no clipping; dampening is always 0, also PyTorch's
// default), so nn.SGDConfig{LR: 0.1} is SGD(lr=0.1). The learning rate
// has no default.
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
	// Clip limits the gradients before the step.
	Clip Clipping
}

// Clipping limits gradients inside the training step, before the
// optimiser uses them, as torch.nn.utils.clip_grad_norm_ and
// clip_grad_value_ do. A zero field switches that clipping off.
type Clipping struct {
	// MaxNorm rescales every gradient by min(1, MaxNorm/(‖g‖+1e-6)), where
	// ‖g‖ is the L2 norm of all the gradients together.
	MaxNorm float64
	// MaxValue clamps each gradient element to [-MaxValue, MaxValue].
	MaxValue float64
}

// SGD is stochastic gradient descent: p ← p - lr·g, with optional momentum
// and weight decay.
type SGD struct {
	cfg   SGDConfig
	state []Named
	graph *graph.Graph // the graph of the first Updates
	rates
}

// NewSGD returns an SGD optimiser; its configuration is checked by Updates.
func NewSGD(cfg SGDConfig) *SGD { return &SGD{cfg: cfg} }

// Updates returns the SGD step of every parameter and, with momentum, of its
// velocity buffer ("momentum_buffer.<param name>").
func (o *SGD) Updates(loss *graph.Node, params []Named) (map[*graph.Node]*graph.Node, error) {
	return o.updatesWith(loss, params, nil)
}

func (o *SGD) updatesWith(loss *graph.Node, params []Named, transform GradientTransform) (map[*graph.Node]*graph.Node, error) {
	if o == nil {
		return nil, nilOptimizer("SGD", "Updates")
	}
	c := o.cfg
	switch {
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return nil, optimError("SGD", "learning rate %v must be positive", c.LR)
	case !(c.Momentum >= 0 && c.Momentum < 1):
		return nil, optimError("SGD", "momentum %v is not in [0, 1)", c.Momentum)
	case c.Nesterov && c.Momentum == 0:
		return nil, optimError("SGD", "Nesterov momentum needs a momentum above 0")
	case !(c.WeightDecay >= 0) || math.IsInf(c.WeightDecay, 0):
		return nil, optimError("SGD", "weight decay %v must be finite and ≥ 0", c.WeightDecay)
	}
	s, err := begin("SGD", &o.graph, loss, params, c.Clip, transform)
	if err != nil {
		return nil, err
	}
	defer s.end()
	lr := s.scalarBuffer(&o.state, "lr", c.LR)
	o.lr = lr
	wd := o.decayBuffer(s, &o.state, c.WeightDecay)
	for i, p := range params {
		g := s.decay(p.Node, s.grads[i], wd)
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
		s.updates[p.Node] = ops.Sub(p.Node, ops.Mul(lr, g))
	}
	return s.finish()
}

// State returns the learning rate and the velocity buffers (none without
// momentum).
func (o *SGD) State() []Named {
	if o == nil {
		return nil
	}
	return o.state
}

// SetLR sets the learning rate the machine's next steps use, without
// recompiling: a schedule calls it between runs.
func (o *SGD) SetLR(m ParamStore, lr float64) error {
	if o == nil {
		return nilOptimizer("SGD", "SetLR")
	}
	return o.setLR("SGD", m, lr)
}

// SetWeightDecay sets the weight decay the machine's next steps use,
// without recompiling (an optimiser built with a weight decay of 0 has
// none to set).
func (o *SGD) SetWeightDecay(m ParamStore, wd float64) error {
	if o == nil {
		return nilOptimizer("SGD", "SetWeightDecay")
	}
	return o.setWeightDecay("SGD", m, wd)
}

// rates are an optimiser's learning rate and weight decay: buffers each
// machine owns, which SetLR and SetWeightDecay write between runs. Nothing
// is kept here: machines of one program, set on goroutines of their own,
// each get their own value.
type rates struct {
	lr, wd *graph.Node // the buffers, once built (wd only with decay)
}

// decayBuffer adds the weight-decay buffer when wd is not 0.
func (r *rates) decayBuffer(s *stepBuilder, state *[]Named, wd float64) *graph.Node {
	if wd == 0 {
		return nil
	}
	r.wd = s.scalarBuffer(state, "weight_decay", wd)
	return r.wd
}

func (r *rates) setLR(name string, m ParamStore, lr float64) error {
	if !(lr > 0) || math.IsInf(lr, 0) {
		return optimError(name, "SetLR: learning rate %v must be positive and finite", lr)
	}
	return setScalar(name, "SetLR", m, r.lr, lr)
}

func (r *rates) setWeightDecay(name string, m ParamStore, wd float64) error {
	if !(wd >= 0) || math.IsInf(wd, 0) {
		return optimError(name, "SetWeightDecay: weight decay %v must be finite and ≥ 0", wd)
	}
	if r.wd == nil && r.lr != nil {
		return optimError(name, "SetWeightDecay: the step was built without weight decay: give WeightDecay a value to change later")
	}
	return setScalar(name, "SetWeightDecay", m, r.wd, wd)
}

// scalarSetter is a ParamStore that sets a one-element parameter from a
// float64 into its own storage, allocating nothing (a *vm.Machine).
type scalarSetter interface {
	SetScalar(param *graph.Node, v float64) error
}

// setScalar writes v into an optimiser's scalar buffer: in place where
// the store can (a schedule then allocates nothing), else through a
// tensor of this call's own.
func setScalar(name, call string, m ParamStore, buffer *graph.Node, v float64) error {
	switch {
	case buffer == nil:
		return optimError(name, "%s before Updates: there is no training program yet", call)
	case m == nil:
		return optimError(name, "%s: the machine must not be nil", call)
	}
	if s, ok := m.(scalarSetter); ok {
		return s.SetScalar(buffer, v)
	}
	value := graph.NewDense(buffer.DType())
	graph.SetFloat(value, 0, v)
	return m.Set(buffer, value)
}

// optimError is an optimiser's error, naming the caller's file:line as
// build errors do.
func optimError(name, format string, args ...any) error {
	msg := "nn: " + name + ": " + fmt.Sprintf(format, args...)
	if site := graph.CallerSite(); site != "" {
		msg += " (called at " + site + ")"
	}
	return errors.New(msg)
}

// builtAt says where n was built, " (built at model.go:12)", or "".
func builtAt(n *graph.Node) string {
	if site := n.Site(); site != "" {
		return " (built at " + site + ")"
	}
	return ""
}

// nilOptimizer is the error of a method called on a nil optimiser.
func nilOptimizer(name, call string) error {
	return optimError(name, "%s on a nil *%s: make it with nn.New%s", call, name, name)
}

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
// optimiser's nodes are built in a scope named after it, for DOT. An
// optimiser serves one graph: Updates may be called again, for another
// loss of the same model (the same model on another batch size, say), and
// the steps it builds share its state.
func begin(name string, owner **graph.Graph, loss *graph.Node, params []Named, clip Clipping, transform GradientTransform) (*stepBuilder, error) {
	if loss == nil {
		return nil, optimError(name, "the loss is nil")
	}
	if p := graph.Poisoned(loss); p != nil {
		return nil, p.Err()
	}
	if err := loss.Graph().Err(); err != nil {
		return nil, err
	}
	if !loss.Type().IsScalar() {
		return nil, optimError(name, "the loss %v is not a scalar", loss)
	}
	if len(params) == 0 {
		return nil, optimError(name, "no parameters to optimise")
	}
	if !(clip.MaxNorm >= 0) || !(clip.MaxValue >= 0) {
		return nil, optimError(name, "clipping norm %v and value %v must be ≥ 0", clip.MaxNorm, clip.MaxValue)
	}
	g := loss.Graph()
	reaches := g.Ancestors([]*graph.Node{loss})
	seen := map[*graph.Node]string{}
	nodes := make([]*graph.Node, len(params))
	for i, p := range params {
		n := p.Node
		switch {
		case n == nil || n.Err() != nil:
			return nil, optimError(name, "parameter %q is nil or poisoned", p.Name)
		case n.Kind() != graph.KindParam:
			return nil, optimError(name, "%q (%v) is not a parameter", p.Name, n)
		case n.Graph() != g:
			return nil, optimError(name, "parameter %q belongs to another graph than the loss", p.Name)
		case n.DType() != params[0].Node.DType():
			return nil, optimError(name, "parameter %q is %v but %q is %v: one optimiser serves one dtype",
				p.Name, n.DType(), params[0].Name, params[0].Node.DType())
		case seen[n] != "":
			return nil, optimError(name, "parameter %q is also listed as %q", p.Name, seen[n])
		case n.ID() >= len(reaches) || !reaches[n.ID()]:
			return nil, optimError(name, "parameter %q%s has no gradient path to the loss: to train only the parameters "+
				"that reach it, pass nn.SkipDisconnected(&skipped) to nn.TrainingUpdates, which names those it leaves out in skipped "+
				"(or leave its module out with nn.Frozen)", p.Name, builtAt(n))
		}
		seen[n] = p.Name
		nodes[i] = n
	}
	if *owner != nil && *owner != g {
		return nil, optimError(name, "the loss belongs to another graph than the one the optimiser serves")
	}
	grads, err := compile.Grad(loss, nodes...)
	if err != nil {
		return nil, fmt.Errorf("nn: %s: %w", name, err)
	}
	if grads, err = transformed(name, transform, grads, params); err != nil {
		return nil, err
	}
	*owner = g
	s := &stepBuilder{
		name: name, g: g, dtype: params[0].Node.DType(), grads: grads,
		updates: map[*graph.Node]*graph.Node{},
		end:     g.Scope(name),
	}
	s.clip(clip)
	return s, nil
}

// clip limits the gradients: each element to [-MaxValue, MaxValue], then
// all together to the L2 norm MaxNorm (PyTorch's clip_grad_value_ and
// clip_grad_norm_, with its 1e-6 guard).
func (s *stepBuilder) clip(c Clipping) {
	if c.MaxValue > 0 {
		hi := s.scalar(c.MaxValue)
		lo := s.scalar(-c.MaxValue)
		for i, g := range s.grads {
			s.grads[i] = ops.Maximum(ops.Minimum(g, hi), lo)
		}
	}
	if c.MaxNorm > 0 {
		var sq *graph.Node
		for _, g := range s.grads {
			if t := ops.Sum(ops.Square(g)); sq == nil {
				sq = t
			} else {
				sq = ops.Add(sq, t)
			}
		}
		norm := ops.Add(ops.Sqrt(sq), s.scalar(1e-6))
		coef := ops.Minimum(ops.Div(s.scalar(c.MaxNorm), norm), s.scalar(1))
		for i, g := range s.grads {
			s.grads[i] = ops.Mul(g, coef)
		}
	}
}

func (s *stepBuilder) scalar(v float64) *graph.Node { return s.g.Scalar(v, s.dtype) }

// decay adds L2 weight decay wd·p to the gradient g (wd a scalar buffer;
// nil for none).
func (s *stepBuilder) decay(p, g, wd *graph.Node) *graph.Node {
	if wd == nil {
		return g
	}
	return ops.Add(g, ops.Mul(p, wd))
}

// buffer adds a zero buffer shaped like p, recorded in state as
// "kind.<p's name>", or returns the one an earlier Updates added.
func (s *stepBuilder) buffer(state *[]Named, kind string, p Named) *graph.Node {
	return s.bufferOf(state, kind, p, s.dtype)
}

// bufferOf is buffer with elements of dtype.
func (s *stepBuilder) bufferOf(state *[]Named, kind string, p Named, dtype tensor.Dtype) *graph.Node {
	name := join(kind, p.Name)
	if b := lookup(*state, name); b != nil {
		return b
	}
	b := s.g.Param(s.name+"."+name, graph.NewDense(dtype, p.Node.Shape()...))
	*state = append(*state, Named{Name: name, Node: b})
	return b
}

// scalarBuffer adds a scalar buffer named name, starting at v, or
// returns the one an earlier Updates added.
func (s *stepBuilder) scalarBuffer(state *[]Named, name string, v float64) *graph.Node {
	if b := lookup(*state, name); b != nil {
		return b
	}
	init := graph.NewDense(s.dtype)
	graph.SetFloat(init, 0, v)
	b := s.g.Param(s.name+"."+name, init)
	*state = append(*state, Named{Name: name, Node: b})
	return b
}

// lookup returns the node named name in state, or nil.
func lookup(state []Named, name string) *graph.Node {
	for _, n := range state {
		if n.Name == name {
			return n.Node
		}
	}
	return nil
}

// finish returns the updates, or the first error building them recorded.
func (s *stepBuilder) finish() (map[*graph.Node]*graph.Node, error) {
	if err := s.g.Err(); err != nil {
		return nil, err
	}
	return s.updates, nil
}
