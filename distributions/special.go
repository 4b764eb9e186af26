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
	lim := float64(10 + 2*n)
	// shifted is Σ 1/(x+k)^(n+1) over the steps taken.
	shifted, z := 0.0, x
	for ; z < lim; z++ {
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
	sign := 1.0
	if n%2 == 0 {
		sign = -1
	}
	// Past n = 170, n! overflows a float64; where the smallest power
	// 1/z^(n+1) is below the normal floats, the powers lose their digits
	// or vanish, which matters unless the first term, 1/x^(n+1), outweighs
	// them by 2⁶⁰ (below zero, the terms near a pole always do): n! times
	// them is then summed in logarithms.
	tiny := math.Pow(max(x, lim), -float64(n+1))
	if n > 170 || x > 0 && tiny < 0x1p-1022 && !(x < lim && tiny < math.Pow(x, -float64(n+1))*0x1p-60) {
		return sign * polygammaLog(n, x, lim)
	}
	// (−1)ⁿ⁺¹·[(n−1)!/zⁿ + n!/(2zⁿ⁺¹) + Σ B₂ₖ·(2k+n−1)!/((2k)!·z²ᵏ⁺ⁿ)] + (−1)ⁿ⁺¹·n!·shifted.
	nf := 1.0 // (n−1)!
	for i := 2; i < n; i++ {
		nf *= float64(i)
	}
	lead := nf * math.Pow(z, -float64(n)) // (n−1)!/zⁿ
	// r = (2k+n−1)!/((n−1)!·(2k)!) and q = (n−1)!/z^(2k+n): their
	// product is the term's factor, without the overflow of (2k+n−1)!.
	sum, r, q := lead+lead*float64(n)/(2*z), 1.0, lead
	for k, b := range bernoulli2k {
		m := float64(2*k + 2)
		r *= (m + float64(n) - 2) * (m + float64(n) - 1) / ((m - 1) * m)
		q /= z * z
		sum += b * r * q
	}
	return sign * (sum + nf*float64(n)*shifted)
}

// polygammaLog is Σₖ n!/(x+k)ⁿ⁺¹ (over x+k < lim) plus the series'
// (n−1)!/zⁿ·(1 + n/(2z) + Σ B₂ₖ·(2k+n−1)!/((n−1)!·(2k)!·z²ᵏ)), ψ⁽ⁿ⁾(x)
// but for the sign (−1)ⁿ⁺¹, for n ≥ 1: each term by its logarithm, so that
// no factorial overflows and no power underflows, and the result
// overflows or underflows only where ψ⁽ⁿ⁾(x) does. Its relative error is
// a few units in the last place of the largest logarithm (below 10⁻¹² up
// to n = 1000), where polygamma's series is exact to a few units in the
// last place.
func polygammaLog(n int, x, lim float64) float64 {
	nf := float64(n)
	logFact, _ := math.Lgamma(nf + 1) // log n!
	// The terms ±e^l are summed as e^top·sum, top their largest l so far.
	top, sum := math.Inf(-1), 0.0
	add := func(l, sign float64) {
		if l > top {
			sum, top = sum*math.Exp(top-l), l
		}
		sum += sign * math.Exp(l-top)
	}
	z := x
	for ; z < lim; z++ {
		sign := 1.0
		if z < 0 && n%2 == 0 { // an odd power of a negative z
			sign = -1
		}
		add(logFact-(nf+1)*math.Log(math.Abs(z)), sign)
	}
	series, r, w := 1+nf/(2*z), 1.0, 1.0 // r = (2k+n−1)!/((n−1)!·(2k)!), w = z^−2k
	for k, b := range bernoulli2k {
		m := float64(2*k + 2)
		r *= (m + nf - 2) * (m + nf - 1) / ((m - 1) * m)
		w /= z * z
		series += b * r * w
	}
	add(logFact-math.Log(nf)-nf*math.Log(z)+math.Log(series), 1)
	return math.Copysign(math.Exp(top+math.Log(math.Abs(sum))), sum)
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
