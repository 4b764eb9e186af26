package distributions

import (
	"math"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Uniform is the continuous uniform distribution on [Low, High).
type Uniform struct {
	Low, High *graph.Node
	batch
}

// NewUniform returns the uniform distributions on [low, high) (low < high),
// of one float dtype and shapes that broadcast together.
func NewUniform(low, high *graph.Node) Uniform {
	return Uniform{Low: low, High: high, batch: newBatch("NewUniform", []string{"low", "high"}, low, high)}
}

// RSample draws low + (high−low)·u with u uniform on [0, 1): the draw
// carries gradients to low and high.
func (d Uniform) RSample(gen *ops.Generator) *graph.Node {
	if bad := d.check("Uniform"); bad != nil {
		return bad
	}
	return ops.Add(d.Low, ops.Mul(ops.Sub(d.High, d.Low), gen.Uniform(d.dtype, d.shape...)))
}

// Sample draws like RSample, without gradients.
func (d Uniform) Sample(gen *ops.Generator) *graph.Node { return ops.StopGradient(d.RSample(gen)) }

// LogProb is −log(high−low) on [low, high) and −∞ outside, as PyTorch's.
func (d Uniform) LogProb(x *graph.Node) *graph.Node {
	if bad := d.value("Uniform", x); bad != nil {
		return bad
	}
	inside := ops.Mul(d.addConst(ops.Neg(ops.Less(x, d.Low)), 1), ops.Less(x, d.High))
	return ops.Sub(ops.Log(inside), ops.Log(ops.Sub(d.High, d.Low)))
}

// Entropy is log(high−low).
func (d Uniform) Entropy() *graph.Node {
	if bad := d.check("Uniform"); bad != nil {
		return bad
	}
	return d.full(ops.Log(ops.Sub(d.High, d.Low)))
}

// Mean is (low+high)/2.
func (d Uniform) Mean() *graph.Node {
	if bad := d.check("Uniform"); bad != nil {
		return bad
	}
	return d.full(ops.Scale(ops.Add(d.Low, d.High), 0.5))
}

// Variance is (high−low)²/12.
func (d Uniform) Variance() *graph.Node {
	if bad := d.check("Uniform"); bad != nil {
		return bad
	}
	return d.full(ops.Scale(ops.Square(ops.Sub(d.High, d.Low)), 1.0/12))
}

// klUniform is KL(p‖q) = log((hq−lq)/(hp−lp)) where q's support holds
// p's, +∞ elsewhere.
func klUniform(p, q Uniform) *graph.Node {
	kl := ops.Log(ops.Div(ops.Sub(q.High, q.Low), ops.Sub(p.High, p.Low)))
	outside := ops.Maximum(ops.Less(p.Low, q.Low), ops.Greater(p.High, q.High))
	return ops.Where(outside, p.constant(math.Inf(1)), kl)
}
