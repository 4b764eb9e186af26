package distributions

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Lgamma returns log|Γ(x)| elementwise. Its derivative is Digamma, so it
// differentiates to any order.
func Lgamma(x *graph.Node) *graph.Node { return graph.Apply(polygammaOp{n: -1}, x) }

// Digamma returns ψ(x) = d/dx log Γ(x) elementwise: Polygamma(0, x).
func Digamma(x *graph.Node) *graph.Node { return Polygamma(0, x) }

// Polygamma returns ψ⁽ⁿ⁾(x), the n-th derivative of ψ, elementwise, for
// n ≥ 0 (a negative n is an error); its derivative is Polygamma(n+1, x).
// It is NaN at the poles 0, −1, −2, … .
func Polygamma(n int, x *graph.Node) *graph.Node {
	if n < 0 {
		var g *graph.Graph
		if x != nil {
			g = x.Graph()
		}
		return fail(g, "Polygamma", "order %d is negative", n)
	}
	return graph.Apply(polygammaOp{n: n}, x)
}

// polygammaOp is ψ⁽ⁿ⁾, or log|Γ| for n = −1.
type polygammaOp struct{ n int }

// Name is "Lgamma", "Digamma" or "Polygamma(n)".
func (op polygammaOp) Name() string {
	switch op.n {
	case -1:
		return "Lgamma"
	case 0:
		return "Digamma"
	}
	return fmt.Sprintf("Polygamma(%d)", op.n)
}

// Type is the input's, a float.
func (op polygammaOp) Type(in []graph.Type) (graph.Type, error) {
	if err := graph.CheckArity(in, 1); err != nil {
		return graph.Type{}, err
	}
	if !graph.IsFloat(in[0].DType) {
		return graph.Type{}, fmt.Errorf("input %v: want float32 or float64", in[0])
	}
	return in[0], nil
}

// Forward computes each element in float64.
func (op polygammaOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	switch o := graph.Backing(out).(type) {
	case []float64:
		for i, x := range graph.Backing(in[0]).([]float64) {
			o[i] = polygamma(op.n, x)
		}
	case []float32:
		for i, x := range graph.Backing(in[0]).([]float32) {
			o[i] = float32(polygamma(op.n, float64(x)))
		}
	}
	return nil
}

// Backward is gradOut·ψ⁽ⁿ⁺¹⁾(x).
func (op polygammaOp) Backward(ctx *graph.GradContext, gradOut *graph.Node) []*graph.Node {
	x := ctx.Inputs()[0]
	return []*graph.Node{ops.Mul(gradOut, graph.Apply(polygammaOp{n: op.n + 1}, x))}
}

// bernoulli2k holds the Bernoulli numbers B₂, B₄, …, B₂₀.
var bernoulli2k = [...]float64{1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6,
	-3617.0 / 510, 43867.0 / 798, -174611.0 / 330}

// maxShift bounds the steps of the recurrence that moves x up to where the
// asymptotic series holds; far below zero polygamma gives NaN.
const maxShift = 1 << 20

// polygamma returns ψ⁽ⁿ⁾(x) for n ≥ 0, log|Γ(x)| for n = −1: the
// recurrence ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(x+1) − (−1)ⁿ·n!/xⁿ⁺¹ moves x to z ≥ 10 + 2n,
// where the asymptotic series in the Bernoulli numbers is accurate to a
// few units in the last place.
func polygamma(n int, x float64) float64 {
	if n < 0 {
		v, _ := math.Lgamma(x)
		return v
	}
	switch {
	case math.IsNaN(x) || (x <= 0 && x == math.Trunc(x)) || x < -maxShift:
		return math.NaN()
	case math.IsInf(x, 1):
		if n == 0 {
			return x
		}
		return 0
	}
	// shifted is Σ 1/(x+k)^(n+1) over the steps taken.
	shifted, z := 0.0, x
	for lim := float64(10 + 2*n); z < lim; z++ {
		shifted += math.Pow(z, -float64(n+1))
	}
	if n == 0 {
		w, series := 1/(z*z), 0.0
		p := w
		for k, b := range bernoulli2k {
			series += b / float64(2*k+2) * p
			p *= w
		}
		return math.Log(z) - 0.5/z - series - shifted
	}
	// (−1)ⁿ⁺¹·[(n−1)!/zⁿ + n!/(2zⁿ⁺¹) + Σ B₂ₖ·(2k+n−1)!/((2k)!·z²ᵏ⁺ⁿ)] + (−1)ⁿ⁺¹·n!·shifted.
	nf := 1.0 // (n−1)!
	for i := 2; i < n; i++ {
		nf *= float64(i)
	}
	zn := math.Pow(z, -float64(n))
	sum := nf*zn + nf*float64(n)*zn/(2*z)
	c, p := nf, zn // c = (2k+n−1)!/(2k)!, p = z^−(2k+n)
	for k, b := range bernoulli2k {
		m := float64(2*k + 2)
		c *= (m + float64(n) - 2) * (m + float64(n) - 1) / ((m - 1) * m)
		p /= z * z
		sum += b * c * p
	}
	sign := 1.0
	if n%2 == 0 {
		sign = -1
	}
	return sign * (sum + nf*float64(n)*shifted)
}

// xlogy is a·log x, 0 where a and x are both 0 (as PyTorch's xlogy), with
// the gradient log x with respect to a wherever x is positive.
func xlogy(a, x *graph.Node) *graph.Node {
	g, dtype := a.Graph(), a.DType()
	zero := g.Scalar(0, dtype)
	both := ops.Mul(ops.Equal(a, zero), ops.Equal(x, zero))
	safe := ops.Where(both, g.Scalar(1, dtype), x)
	return ops.Where(both, zero, ops.Mul(a, ops.Log(safe)))
}
