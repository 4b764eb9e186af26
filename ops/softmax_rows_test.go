package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// softmaxTestRows are rows of 70 elements (longer than a block of wideBlock)
// holding what attention's scores hold: numbers, a causal mask's trailing
// -Inf (every length, none kept included), -Inf inside a row, NaN and
// +Inf.
func softmaxTestRows(n int) [][]float64 {
	rng := rand.New(rand.NewPCG(3, 4))
	inf := math.Inf(1)
	row := func(f func(k int) float64) []float64 {
		r := make([]float64, n)
		for k := range r {
			r[k] = f(k)
		}
		return r
	}
	var rows [][]float64
	for keep := 0; keep <= n; keep += 7 {
		rows = append(rows, row(func(k int) float64 {
			if k >= keep {
				return -inf
			}
			return 4 * rng.NormFloat64()
		}))
	}
	rows = append(rows,
		row(func(k int) float64 { return []float64{-inf, 1}[k%2] }),
		row(func(k int) float64 { return []float64{1, -inf, 2, -inf}[min(k, 3)] }),
		row(func(k int) float64 { return []float64{math.NaN(), 1, -inf}[min(k, 2)] }),
		row(func(k int) float64 { return []float64{1, inf, -inf}[min(k, 2)] }),
		row(func(k int) float64 { return []float64{-inf, inf, 2}[min(k, 2)] }),
		row(func(int) float64 { return 800 }),
	)
	return rows
}

// The softmax of contiguous rows (softmaxRow, which skips trailing -Inf)
// gives the bits of the strided loop on the same rows laid out as columns,
// and is within a few ulp of the formula in float64 with math.Exp.
func TestSoftmaxRowsMatchStrided(t *testing.T) {
	for _, log := range []bool{false, true} {
		for _, n := range []int{1, 5, 70} {
			rows := softmaxTestRows(n)
			name := fmt.Sprintf("log=%v/n=%d", log, n)
			t.Run(name+"/float32", func(t *testing.T) { checkSoftmaxRows[float32](t, rows, log, 1e-6) })
			t.Run(name+"/float64", func(t *testing.T) { checkSoftmaxRows[float64](t, rows, log, 1e-14) })
		}
	}
}

func checkSoftmaxRows[T float](t *testing.T, rows [][]float64, log bool, tol float64) {
	t.Helper()
	outer, n := len(rows), len(rows[0])
	x, cols := make([]T, outer*n), make([]T, outer*n) // cols: x transposed, (n, outer)
	for r, row := range rows {
		for k, v := range row {
			x[r*n+k], cols[k*outer+r] = T(v), T(v)
		}
	}
	got, strided := make([]T, len(x)), make([]T, len(x))
	softmaxKernel(got, x, outer, n, 1, log)
	softmaxKernel(strided, cols, 1, n, outer, log)
	for r, row := range rows {
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, float64(T(v)))
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(float64(T(v)) - m)
		}
		for k, v := range row {
			g, s := float64(got[r*n+k]), float64(strided[k*outer+r])
			if math.Float64bits(g) != math.Float64bits(s) && !(math.IsNaN(g) && math.IsNaN(s)) {
				t.Fatalf("row %d element %d: contiguous %v, strided %v", r, k, g, s)
			}
			want := math.Exp(float64(T(v))-m) / sum
			if log {
				want = float64(T(v)) - m - math.Log(sum)
			}
			if math.IsInf(m, 0) || math.IsNaN(m) || math.IsInf(want, 0) {
				continue // the bits above say what these give
			}
			scale := math.Max(1, math.Abs(want))
			if log { // x - (m + log sum) rounds at m's magnitude
				scale = math.Max(scale, math.Abs(m))
			}
			if math.Abs(g-want) > tol*scale {
				t.Fatalf("row %d element %d: got %v, want %v", r, k, g, want)
			}
		}
	}
}

// BenchmarkSoftmaxCausal times the softmax of causal attention scores:
// 128 heads·images of 64 queries over 64 keys, row i keeping keys ≤ i.
func BenchmarkSoftmaxCausal(b *testing.B) {
	const rows, n = 128 * 64, 64
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, rows*n)
	for r := range rows {
		for k := range n {
			x[r*n+k] = float32(rng.NormFloat64())
			if k > r%n {
				x[r*n+k] = float32(math.Inf(-1))
			}
		}
	}
	out := make([]float32, len(x))
	for b.Loop() {
		softmaxKernel(out, x, rows, n, 1, false)
	}
}
