package nn

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// GradientTransform rewrites the gradients of a training step before the
// optimiser uses them: grads[i] is the gradient of params[i], and it
// returns one node of the same type for each. It builds graph nodes, so
// what it does runs inside the training program.
type GradientTransform func(grads []*graph.Node, params []Named) ([]*graph.Node, error)

// TransformGradients has TrainingUpdates pass the loss's gradients
// through f before the optimiser's clipping and update: package dist's
// DataParallel averages them across processes with it. It needs one of
// nn's optimisers (SGD, Adam, AdamW).
func TransformGradients(f GradientTransform) TrainingOption {
	return func(c *trainingConfig) { c.transform = f }
}

// transformingOptimizer is an optimiser that can apply a
// GradientTransform: nn's own.
type transformingOptimizer interface {
	updatesWith(loss *graph.Node, params []Named, transform GradientTransform) (map[*graph.Node]*graph.Node, error)
}

// updates asks opt for its updates, through the gradient transform if
// there is one.
func (c trainingConfig) updates(opt Optimizer, loss *graph.Node, params []Named) (map[*graph.Node]*graph.Node, error) {
	if c.transform == nil {
		return opt.Updates(loss, params)
	}
	t, ok := opt.(transformingOptimizer)
	if !ok {
		return nil, optimError("TrainingUpdates", "TransformGradients needs one of nn's optimisers (SGD, Adam, AdamW), not %T", opt)
	}
	return t.updatesWith(loss, params, c.transform)
}

// transformed applies transform (nil: none) to grads, checking that each
// result fits its gradient.
func transformed(name string, transform GradientTransform, grads []*graph.Node, params []Named) ([]*graph.Node, error) {
	if transform == nil {
		return grads, nil
	}
	out, err := transform(grads, params)
	if err != nil {
		return nil, fmt.Errorf("nn: %s: transforming the gradients: %w", name, err)
	}
	if len(out) != len(grads) {
		return nil, optimError(name, "the gradient transform returned %d gradients for %d parameters", len(out), len(grads))
	}
	for i, g := range out {
		if g == nil {
			return nil, optimError(name, "the gradient transform returned nil for %q", params[i].Name)
		}
		if err := graph.Poisoned(g); err != nil {
			return nil, err.Err()
		}
		if !g.Type().Equal(grads[i].Type()) {
			return nil, optimError(name, "the gradient transform returned %v for %q, whose gradient is %v", g.Type(), params[i].Name, grads[i].Type())
		}
	}
	return out, nil
}
