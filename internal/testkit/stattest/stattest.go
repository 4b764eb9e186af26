// Package stattest holds what the statistical tests of random draws share:
// the Kolmogorov–Smirnov and chi-squared statistics and their p-values, so
// that a test can report how far from its threshold a sample fell.
package stattest

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// KS is √n times the Kolmogorov–Smirnov distance between the sample x
// (left as it is) and the distribution function cdf.
func KS(x []float64, cdf func(float64) float64) float64 {
	x = slices.Sorted(slices.Values(x))
	n := float64(len(x))
	d := 0.0
	for i, v := range x {
		f := cdf(v)
		d = max(d, float64(i+1)/n-f, f-float64(i)/n)
	}
	return math.Sqrt(n) * d
}

// ChiSquared is Pearson's statistic of counts against expected counts.
func ChiSquared(counts, want []float64) float64 {
	x := 0.0
	for i := range counts {
		x += (counts[i] - want[i]) * (counts[i] - want[i]) / want[i]
	}
	return x
}

// KolmogorovP is the asymptotic p-value of a Kolmogorov–Smirnov statistic
// x = √n·D: the probability that a sample of the hypothesised distribution
// has a statistic above x, 2·Σₖ (−1)ᵏ⁻¹ exp(−2k²x²). √n·D = 1.95 has
// p ≈ 0.001.
func KolmogorovP(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p, sign := 0.0, 1.0
	for k := 1; k <= 100; k++ {
		term := math.Exp(-2 * float64(k*k) * x * x)
		p += sign * term
		if term < 1e-17 {
			break
		}
		sign = -sign
	}
	return min(max(2*p, 0), 1)
}

// ChiSquaredP is the p-value of Pearson's statistic x with dof degrees of
// freedom: the probability of a statistic above x.
func ChiSquaredP(x float64, dof int) float64 {
	return distuv.ChiSquared{K: float64(dof)}.Survival(x)
}
