package main

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
)

// Standardize scales each feature to zero mean and unit variance. In
// training mode it uses the batch's statistics and moves running estimates
// towards them; in evaluation mode it uses the running estimates. (It is
// batch normalisation without the learned scale and shift.)
type Standardize struct {
	RunningMean *graph.Node `nn:",buffer"` // (features)
	RunningVar  *graph.Node `nn:",buffer"` // (features)
	momentum    float64
	training    bool
	updates     map[*graph.Node]*graph.Node
	name        string
}

// NewStandardize adds the running estimates of a Standardize module to g:
// mean 0 and variance 1 until training moves them.
func NewStandardize(g *graph.Graph, name string, features int, momentum float64) *Standardize {
	ones := graph.NewDense(graph.Float64, features)
	for i := range features {
		graph.SetFloat(ones, i, 1)
	}
	return &Standardize{
		RunningMean: g.Param(name+".running_mean", graph.NewDense(graph.Float64, features)),
		RunningVar:  g.Param(name+".running_var", ones),
		momentum:    momentum,
		training:    true,
		name:        name,
	}
}

// Forward standardises x (batch, features).
func (s *Standardize) Forward(x *graph.Node) *graph.Node {
	if p := graph.Poisoned(x); p != nil {
		return p
	}
	g := x.Graph()
	defer g.Scope(s.name)()
	mean, variance := s.RunningMean, s.RunningVar
	if s.training {
		mean = ops.Mean(x, 0)
		variance = ops.Mean(ops.Square(ops.Sub(x, mean)), 0)
		s.updates = map[*graph.Node]*graph.Node{
			s.RunningMean: s.blend(s.RunningMean, mean),
			s.RunningVar:  s.blend(s.RunningVar, variance),
		}
	}
	return ops.Div(ops.Sub(x, mean), ops.Sqrt(ops.Add(variance, g.Scalar(1e-5, x.DType()))))
}

// blend moves a running estimate a step of size momentum towards a batch's
// statistic.
func (s *Standardize) blend(running, batch *graph.Node) *graph.Node {
	return ops.Add(ops.Scale(running, 1-s.momentum), ops.Scale(batch, s.momentum))
}

// SetTraining chooses between the batch's statistics and the running ones
// for the Forward calls that follow (nn.SetTraining calls it).
func (s *Standardize) SetTraining(training bool) { s.training = training }

// StateUpdates returns the running estimates' updates, built by a
// training-mode Forward (nn.TrainingUpdates collects them).
func (s *Standardize) StateUpdates() map[*graph.Node]*graph.Node { return s.updates }

// Describe shows the momentum when the model is printed.
func (s *Standardize) Describe() string { return fmt.Sprintf("momentum=%v", s.momentum) }

// Classifier standardises its input, then applies its layers. It registers
// nothing: nn finds the buffers of norm and the parameters of the layers,
// in a plain slice, by walking its fields.
type Classifier struct {
	norm   *Standardize
	layers []nn.Module
}

// Forward returns the logits of x.
func (c *Classifier) Forward(x *graph.Node) *graph.Node {
	if p := graph.Poisoned(x); p != nil {
		return p
	}
	defer x.Graph().Scope("classifier")()
	x = c.norm.Forward(x)
	for _, l := range c.layers {
		x = l.Forward(x)
	}
	return x
}
