package vek

import (
	"math/rand/v2"
	"testing"
)

// SumLanes and DevLanes, with the assembly and with the Go loops, give
// each lane the sum taken element by element in order, bit for bit, and
// return the elements past the whole blocks of 8.
func TestLanes(t *testing.T) {
	implementations(t, func(t *testing.T) {
		checkLanes[float32](t)
		checkLanes[float64](t)
	})
}

func checkLanes[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := range 41 {
		x, y := make([]T, n), make([]T, n+3) // y may be longer
		for i := range x {
			x[i] = T(rng.NormFloat64() * 100)
		}
		for i := range y {
			y[i] = T(rng.NormFloat64())
		}
		var start [8]T
		for k := range start {
			start[k] = T(rng.NormFloat64())
		}
		mx, my := T(rng.NormFloat64()), T(rng.NormFloat64())
		wantSum, wantDev := start, start
		whole := n / 8 * 8
		for i := range whole {
			wantSum[i%8] += x[i]
			wantDev[i%8] += (x[i] - mx) * (y[i] - my)
		}
		sum, dev := start, start
		if rest := SumLanes(&sum, x); len(rest) != n-whole || (n > whole && &rest[0] != &x[whole]) {
			t.Fatalf("n=%d: SumLanes left %d elements, want x[%d:]", n, len(rest), whole)
		}
		if rest := DevLanes(&dev, x, y, mx, my); len(rest) != n-whole {
			t.Fatalf("n=%d: DevLanes left %d elements, want %d", n, len(rest), n-whole)
		}
		if sum != wantSum {
			t.Fatalf("%T n=%d: SumLanes %v, want %v", x, n, sum, wantSum)
		}
		if dev != wantDev {
			t.Fatalf("%T n=%d: DevLanes %v, want %v", x, n, dev, wantDev)
		}
	}
}
