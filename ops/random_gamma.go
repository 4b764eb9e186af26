package ops

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// gammaBlocks is the number of Philox blocks each element of a gamma draw
// owns: one for the boost of concentrations below 1, then two per attempt
// of Marsaglia and Tsang's rejection method.
const gammaBlocks = 32

// gammaAttempts is the number of attempts the blocks hold. Each attempt is
// accepted with probability above 0.95, so all of them fail with
// probability below 10⁻¹⁹; the draw is then d = α − ⅓ (see gammaDraw).
const gammaAttempts = (gammaBlocks - 1) / 2

// randomGammaOp draws standard gamma values of the concentrations held by
// its second input.
type randomGammaOp struct{ s Stream }

// RandomGamma returns a tensor of alpha's type whose elements are drawn
// from the gamma distributions of concentrations alpha (rate 1), from
// stream s at the value of step (see RandomUniform), by Marsaglia and
// Tsang's method ("A simple method for generating gamma variables", 2000),
// as PyTorch does: for α ≥ 1, with d = α − ⅓ and c = 1/√(9d), d·v for
// v = (1 + c·x)³ from a standard normal x, accepted by a uniform u when
// log u < ½x² + d·(1 − v + log v); for α < 1, a draw of α + 1 times u^(1/α).
// Element i owns blocks 32i to 32i+31 of the stream, so every element maps
// to fixed counters whatever the rejections, and the values do not depend
// on the number of threads; draws are computed in float64 and floored at
// the dtype's smallest normal number, as PyTorch's, by fixed procedures
// for log, exp and the normal draws (see normalPair64 and exp64; u^(1/α)
// as exp(log u / α)), every product rounded, so that the GPU kernel draws
// the same bits. A concentration that is not positive gives NaN. It has no gradient (differentiated, it gives
// zero, as a sample under StopGradient): distributions.Gamma's RSample
// carries the reparameterised one, which differentiates twice.
func RandomGamma(step *graph.Node, s Stream, alpha *graph.Node) *graph.Node {
	return graph.Apply(randomGammaOp{s: s}, step, alpha)
}

// Name is "RandomGamma".
func (randomGammaOp) Name() string { return "RandomGamma" }

// DrawStep is the position of the step input (see graph.Drawer).
func (randomGammaOp) DrawStep() int { return 0 }

// Type checks the step and the concentrations, and gives their type.
func (op randomGammaOp) Type(in []graph.Type) (graph.Type, error) {
	if err := stepInput(in, 2); err != nil {
		return graph.Type{}, err
	}
	switch a := in[1]; {
	case !graph.IsFloat(a.DType):
		return graph.Type{}, fmt.Errorf("concentrations %v: want float32 or float64", a)
	case uint64(a.Size()) > maxRandomBlocks/gammaBlocks:
		return graph.Type{}, fmt.Errorf("%v has %d elements, over the %d one stream draws at a step", a, a.Size(), uint64(maxRandomBlocks/gammaBlocks))
	}
	return in[1], nil
}

// Forward draws each element.
func (op randomGammaOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	step, err := randomStep(in[0])
	if err != nil {
		return err
	}
	switch o := graph.Backing(out).(type) {
	case []float64:
		for i, a := range graph.Backing(in[1]).([]float64) {
			o[i] = max(gammaDraw(op.s, step, uint32(i), a), 0x1p-1022)
		}
	case []float32:
		for i, a := range graph.Backing(in[1]).([]float32) {
			o[i] = max(float32(gammaDraw(op.s, step, uint32(i), float64(a))), 0x1p-126)
		}
	}
	return nil
}

// Backward: the draw does not depend smoothly on the step, and its
// dependence on the concentrations is not provided.
func (randomGammaOp) Backward(*graph.GradContext, *graph.Node) []*graph.Node {
	return []*graph.Node{nil, nil}
}

// openUniforms returns the two 53-bit uniforms of a block, in (0, 1).
func openUniforms(w [4]uint32) (float64, float64) {
	x := uint64(w[0])<<32 | uint64(w[1])
	y := uint64(w[2])<<32 | uint64(w[3])
	return (float64(x>>11) + 0.5) * 0x1p-53, (float64(y>>11) + 0.5) * 0x1p-53
}

// gammaDraw draws element i, of concentration a, from its blocks.
func gammaDraw(s Stream, step uint64, i uint32, a float64) float64 {
	if !(a > 0) || math.IsInf(a, 1) {
		return math.NaN()
	}
	base := i * gammaBlocks
	boost := 1.0
	if a < 1 {
		u, _ := openUniforms(s.block(step, base))
		boost = exp64(log64(u) / a) // u^(1/a)
		a++
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for k := uint32(0); k < gammaAttempts; k++ {
		x, _ := boxMuller(openUniforms(s.block(step, base+1+2*k)))
		v := 1 + float64(c*x)
		if v <= 0 {
			continue
		}
		v = v * v * v
		u, _ := openUniforms(s.block(step, base+2+2*k))
		x2 := x * x
		if u < 1-float64(0.0331*x2*x2) || log64(u) < float64(0.5*x2)+float64(d*(1-v+log64(v))) {
			return d * v * boost
		}
	}
	return d * boost
}

// Gamma draws standard gamma values (rate 1) of the concentrations alpha
// (see RandomGamma).
func (r *Generator) Gamma(alpha *graph.Node) *graph.Node {
	return r.draw(func(s Stream) *graph.Node { return RandomGamma(r.Step, s, alpha) })
}
