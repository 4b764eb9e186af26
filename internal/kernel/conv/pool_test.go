package conv

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMaxHalvesAgreesWithDefinition compares MaxHalves, where it runs,
// with the first maximum in reading order of each window, bit for bit (so
// +0 and -0 apart), in both element types, on inputs drawn from a few
// values with ties, zeros of both signs and infinities, for widths
// around the vectors' lanes, rows wider than their windows and pairs of
// rows apart; it checks that nothing past a row's outputs is written,
// and that a NaN anywhere among the inputs is reported.
func TestMaxHalvesAgreesWithDefinition(t *testing.T) {
	if !Available() {
		t.Skip("no assembly kernels here")
	}
	for _, ow := range []int{1, 3, 4, 7, 8, 9, 12, 15, 16, 17, 31, 33} {
		t.Run("float32", func(t *testing.T) { checkMaxHalves[float32](t, ow) })
		t.Run("float64", func(t *testing.T) { checkMaxHalves[float64](t, ow) })
	}
}

func checkMaxHalves[T Float](t *testing.T, ow int) {
	r := rand.New(rand.NewPCG(uint64(ow), 3))
	values := []float64{math.Copysign(0, -1), 0, 1, -1, 2, math.Inf(1), math.Inf(-1), 0.5}
	const rows = 5
	w := 2*ow + ow%2 // odd widths leave a last column out
	lds := 2*w + 3
	src := make([]T, (rows-1)*lds+2*w)
	for i := range src {
		src[i] = T(values[r.IntN(len(values))])
	}
	ldd := ow + 2
	const sentinel = 777
	dst := make([]T, rows*ldd)
	for i := range dst {
		dst[i] = sentinel
	}
	if !MaxHalves(dst, ldd, src, lds, w, rows, ow) {
		t.Fatalf("ow %d: reported a NaN among inputs without one", ow)
	}
	for i := range rows {
		for j := range ldd {
			got := dst[i*ldd+j]
			if j >= ow {
				if got != sentinel {
					t.Fatalf("ow %d: dst[%d][%d] = %v, written past the row", ow, i, j, got)
				}
				continue
			}
			top := i*lds + 2*j
			want := src[top]
			for _, at := range []int{top + 1, top + w, top + w + 1} {
				if src[at] > want {
					want = src[at]
				}
			}
			if math.Float64bits(float64(got)) != math.Float64bits(float64(want)) {
				t.Fatalf("ow %d: dst[%d][%d] = %v, want %v (window %v %v / %v %v)", ow, i, j, got, want,
					src[top], src[top+1], src[top+w], src[top+w+1])
			}
		}
	}
	last := (rows-1)*lds + w + 2*ow - 1 // the last input read
	for _, at := range []int{0, 2*ow - 1, w, lds + w + 1, last} {
		keep := src[at]
		src[at] = T(math.NaN())
		if MaxHalves(dst, ldd, src, lds, w, rows, ow) {
			t.Fatalf("ow %d: a NaN at %d not reported", ow, at)
		}
		src[at] = keep
	}
}
