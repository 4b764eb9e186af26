package distributions

import (
	"math"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Bernoulli is the distribution on {0, 1} of probability sigmoid(Logits)
// of 1.
type Bernoulli struct {
	Logits *graph.Node
	batch
}

// NewBernoulli returns the Bernoulli distributions of log-odds logits.
func NewBernoulli(logits *graph.Node) Bernoulli {
	return Bernoulli{Logits: logits, batch: newBatch("NewBernoulli", []string{"logits"}, logits)}
}

// Probs is sigmoid(logits), the probability of 1.
func (d Bernoulli) Probs() *graph.Node {
	if bad := d.check("Bernoulli"); bad != nil {
		return bad
	}
	return ops.Sigmoid(d.Logits)
}

// Sample draws 1 with probability Probs, else 0 (see ops.RandomBernoulli).
func (d Bernoulli) Sample(gen *ops.Generator) *graph.Node {
	if bad := d.check("Bernoulli"); bad != nil {
		return bad
	}
	return gen.Bernoulli(ops.StopGradient(d.Probs()))
}

// LogProb is x·logits − softplus(logits), minus the binary cross-entropy
// with logits, stable for logits of any size.
func (d Bernoulli) LogProb(x *graph.Node) *graph.Node {
	if bad := d.value("Bernoulli", x); bad != nil {
		return bad
	}
	return ops.Sub(ops.Mul(x, d.Logits), ops.Softplus(d.Logits))
}

// Entropy is softplus(logits) − p·logits.
func (d Bernoulli) Entropy() *graph.Node {
	if bad := d.check("Bernoulli"); bad != nil {
		return bad
	}
	return ops.Sub(ops.Softplus(d.Logits), ops.Mul(d.Probs(), d.Logits))
}

// Mean is p.
func (d Bernoulli) Mean() *graph.Node { return d.Probs() }

// Variance is p·(1−p).
func (d Bernoulli) Variance() *graph.Node {
	if bad := d.check("Bernoulli"); bad != nil {
		return bad
	}
	return ops.Mul(d.Probs(), ops.Sigmoid(ops.Neg(d.Logits)))
}

// klBernoulli is KL(p‖q) = πp·(softplus(−lq) − softplus(−lp)) +
// (1−πp)·(softplus(lq) − softplus(lp)), as PyTorch computes it.
func klBernoulli(p, q Bernoulli) *graph.Node {
	pp := p.Probs()
	t1 := ops.Mul(pp, ops.Sub(ops.Softplus(ops.Neg(q.Logits)), ops.Softplus(ops.Neg(p.Logits))))
	t2 := ops.Mul(ops.Sigmoid(ops.Neg(p.Logits)), ops.Sub(ops.Softplus(q.Logits), ops.Softplus(p.Logits)))
	return ops.Add(t1, t2)
}

// Categorical is the distribution on the classes 0, …, K−1 of
// probabilities softmax(Logits) along Logits' last axis, of size K; the
// batch shape is the other axes'.
type Categorical struct {
	Logits *graph.Node
	batch
	classes int
}

// NewCategorical returns the categorical distributions of unnormalised
// log-probabilities logits, at least a vector, classes along the last axis.
func NewCategorical(logits *graph.Node) Categorical {
	b := newBatch("NewCategorical", []string{"logits"}, logits)
	if b.bad != nil {
		return Categorical{Logits: logits, batch: b}
	}
	shape := logits.Shape()
	if len(shape) == 0 || shape[len(shape)-1] == 0 {
		return Categorical{Logits: logits, batch: batch{bad: fail(b.g, "NewCategorical", "logits %v has no classes: want a last axis of size ≥ 1", logits.Type())}}
	}
	b.shape = shape[:len(shape)-1]
	return Categorical{Logits: logits, batch: b, classes: shape[len(shape)-1]}
}

// LogProbs is log softmax(logits) along the last axis.
func (d Categorical) LogProbs() *graph.Node {
	if bad := d.check("Categorical"); bad != nil {
		return bad
	}
	return ops.LogSoftmax(d.Logits, -1)
}

// Probs is softmax(logits) along the last axis.
func (d Categorical) Probs() *graph.Node {
	if bad := d.check("Categorical"); bad != nil {
		return bad
	}
	return ops.Softmax(d.Logits, -1)
}

// Sample draws a class index per batch element (as a float of the logits'
// dtype) with probabilities softmax(logits) (see ops.RandomCategorical).
func (d Categorical) Sample(gen *ops.Generator) *graph.Node {
	if bad := d.check("Categorical"); bad != nil {
		return bad
	}
	return gen.Categorical(d.Logits)
}

// LogProb is log softmax(logits) at the class indices x (integers held in
// the logits' dtype, of a shape that broadcasts with the batch).
func (d Categorical) LogProb(x *graph.Node) *graph.Node {
	if bad := d.value("Categorical", x); bad != nil {
		return bad
	}
	return ops.Sum(ops.Mul(ops.OneHot(x, d.classes, d.dtype), d.LogProbs()), -1)
}

// Entropy is −Σ p·log p over the classes.
func (d Categorical) Entropy() *graph.Node {
	if bad := d.check("Categorical"); bad != nil {
		return bad
	}
	return ops.Neg(ops.Sum(ops.Mul(d.Probs(), d.LogProbs()), -1))
}

// Mean is NaN, as PyTorch's: class indices have no meaningful mean.
func (d Categorical) Mean() *graph.Node { return d.undefined() }

// Variance is NaN, as PyTorch's.
func (d Categorical) Variance() *graph.Node { return d.undefined() }

func (d Categorical) undefined() *graph.Node {
	if bad := d.check("Categorical"); bad != nil {
		return bad
	}
	return ops.BroadcastTo(d.constant(math.NaN()), d.shape...)
}

// klCategorical is KL(p‖q) = Σ πp·(log πp − log πq) over the classes.
func klCategorical(p, q Categorical) *graph.Node {
	return ops.Sum(ops.Mul(p.Probs(), ops.Sub(p.LogProbs(), q.LogProbs())), -1)
}
