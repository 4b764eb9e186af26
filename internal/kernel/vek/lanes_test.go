package vek

import (
	"math"
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

// Sum4, with the assembly and with the Go loops, gives each row the bits
// of a loop with four accumulators written out here, on lengths 0 to 70
// (each tail), with -0 (a row of -0 sums to +0, as the loop's), ±Inf and
// NaN among the values, and rows that overlap.
func TestSum4(t *testing.T) {
	implementations(t, func(t *testing.T) {
		checkSum4[float32](t)
		checkSum4[float64](t)
	})
}

func checkSum4[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	inf := T(math.Inf(1))
	specials := []T{T(math.Copysign(0, -1)), inf, -inf, T(math.NaN())}
	for n := range 71 {
		x := make([]T, 4*n+3)
		for i := range x {
			x[i] = T(rng.NormFloat64() * 100)
			if rng.IntN(40) == 0 {
				x[i] = specials[rng.IntN(len(specials))]
			}
		}
		negZero := make([]T, n)
		for i := range negZero {
			negZero[i] = T(math.Copysign(0, -1))
		}
		rows := [4][]T{x[:n], x[n : 2*n], x[1 : n+1], negZero} // rows 0 and 2 overlap
		if n > 0 {
			rows[1] = x[2*n+3 : 3*n+3]
		}
		var got [4]T
		Sum4(&got, rows[0], rows[1], rows[2], rows[3], n)
		for k, row := range rows {
			var a [4]T
			i := 0
			for ; i+4 <= n; i += 4 {
				for j := range a {
					a[j] += row[i+j]
				}
			}
			for ; i < n; i++ {
				a[0] += row[i]
			}
			want := (a[0] + a[1]) + (a[2] + a[3])
			if bits(got[k]) != bits(want) {
				t.Fatalf("n=%d row %d: %v, want %v", n, k, got[k], want)
			}
		}
	}
}

// Max, with the assembly and with the Go loops, is the plain loop's
// maximum on lengths 0 to 40 (-Inf when empty), NaN wherever a NaN is,
// in a whole block of 8 or in the tail, and ±Inf and zeros of either sign
// (a largest zero may come back with either sign).
func TestMax(t *testing.T) {
	implementations(t, func(t *testing.T) {
		checkMax[float32](t)
		checkMax[float64](t)
	})
}

func checkMax[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	specials := []T{0, T(math.Copysign(0, -1)), T(math.Inf(1)), T(math.Inf(-1)), T(math.NaN())}
	for n := range 41 {
		for trial := range 40 {
			x := make([]T, n)
			for i := range x {
				x[i] = T(rng.NormFloat64())
				if trial%4 == 1 {
					x[i] = -T(rng.Float64()) // negative: a zero may be the largest
				}
				if trial%4 >= 2 && rng.IntN(12) == 0 {
					x[i] = specials[rng.IntN(len(specials))]
				}
			}
			want := T(math.Inf(-1))
			for _, v := range x {
				want = max(want, v)
			}
			got := Max(x)
			if got != want && !(got != got && want != want) {
				t.Fatalf("n=%d %v: %v, want %v", n, x, got, want)
			}
		}
	}
}
