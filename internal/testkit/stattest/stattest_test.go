package stattest

import (
	"math"
	"testing"
)

// TestKolmogorovP checks the p-values, to 1%, against the Kolmogorov
// distribution's tabulated quantiles: P(K > 1.358) = 0.05, P(K > 1.628) = 0.01,
// P(K > 1.949) = 0.001.
func TestKolmogorovP(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{{1.3581, 0.05}, {1.6276, 0.01}, {1.9495, 0.001}, {0, 1}} {
		if got := KolmogorovP(c.x); math.Abs(got-c.want) > 0.01*c.want {
			t.Errorf("KolmogorovP(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

// TestChiSquaredP checks the p-values, to 1%, against the tabulated
// quantiles the statistical tests use as thresholds.
func TestChiSquaredP(t *testing.T) {
	for _, c := range []struct {
		x   float64
		dof int
	}{{16.27, 3}, {24.32, 7}, {49.73, 23}} {
		if got := ChiSquaredP(c.x, c.dof); math.Abs(got-0.001) > 1e-5 {
			t.Errorf("ChiSquaredP(%v, %d) = %v, want 0.001", c.x, c.dof, got)
		}
	}
}
