package vek

import (
	"fmt"
	"math"
	"testing"
)

// Where chooses each element as a hand-written selection does, bit for
// bit (NaN payloads, -0), for every length up to three vectors of
// either type (the tails included), each stride of x and y, and keep
// values that are zero (+0, -0) or not (NaN, Inf, tiny), in place too.
func TestWhere(t *testing.T) {
	implementations(t, func(t *testing.T) {
		x32 := make([]float32, len(special32))
		for i, b := range special32 {
			x32[i] = math.Float32frombits(b)
		}
		x64 := make([]float64, len(special64))
		for i, b := range special64 {
			x64[i] = math.Float64frombits(b)
		}
		checkWhere(t, x32)
		checkWhere(t, x64)
	})
}

func checkWhere[T Float](t *testing.T, specials []T) {
	keeps := []T{0, T(math.Copysign(0, -1)), 1, T(math.NaN()), T(math.Inf(-1)), T(math.SmallestNonzeroFloat32), -2}
	for n := 0; n <= 3*8+1; n++ {
		keep, x, y := make([]T, n), make([]T, n), make([]T, n)
		for i := range n {
			keep[i] = keeps[(i*5+n)%len(keeps)]
			x[i] = specials[(i*3+n)%len(specials)]
			y[i] = specials[(i*7+1)%len(specials)]
		}
		for _, s := range [][2]int{{1, 1}, {1, 0}, {0, 1}, {0, 0}} {
			xs, ys := x, y
			if s[0] == 0 && n > 0 {
				xs = x[:1]
			}
			if s[1] == 0 && n > 0 {
				ys = y[:1]
			}
			got := make([]T, n)
			Where(got, keep, xs, s[0], ys, s[1])
			inPlace := append([]T(nil), keep...)
			Where(inPlace, inPlace, xs, s[0], ys, s[1])
			for i := range n {
				want := xs[i*s[0]]
				if keep[i] == 0 { // +0 and -0
					want = ys[i*s[1]]
				}
				name := fmt.Sprintf("%T n=%d strides=%v [%d] keep %v", T(0), n, s, i, keep[i])
				if bits(got[i]) != bits(want) {
					t.Fatalf("%s: got %v (%#x), want %v (%#x)", name, got[i], bits(got[i]), want, bits(want))
				}
				if bits(inPlace[i]) != bits(want) {
					t.Fatalf("%s, in place: got %v, want %v", name, inPlace[i], want)
				}
			}
		}
	}
}

// Fill writes the same bits to every element, for every length up to
// three vectors and one (the tails), NaN payloads and -0 included, and
// nothing past dst.
func TestFill(t *testing.T) {
	implementations(t, func(t *testing.T) {
		for _, b := range special32 {
			checkFill(t, math.Float32frombits(b))
		}
		for _, b := range special64 {
			checkFill(t, math.Float64frombits(b))
		}
		checkFillWords(t, uint32(0xffffffff), uint64(1<<63|1<<53+1))
		checkFillWords(t, int32(-3), int64(-(1<<62)-1))
	})
}

// checkFillWords checks integers, which Fill copies as the floats' bits
// (integer carries broadcast by BroadcastTo).
func checkFillWords[A ~int32 | ~uint32, B ~int64 | ~uint64](t *testing.T, a A, b B) {
	for n := 0; n <= 3*8+1; n++ {
		x, y := make([]A, n), make([]B, n)
		Fill(x, a)
		Fill(y, b)
		for i := range n {
			if x[i] != a || y[i] != b {
				t.Fatalf("n=%d [%d]: got %#x and %#x, want %#x and %#x", n, i, x[i], y[i], a, b)
			}
		}
	}
}

func checkFill[T Float](t *testing.T, c T) {
	for n := 0; n <= 3*8+1; n++ {
		buf := make([]T, n+1)
		buf[n] = 7
		Fill(buf[:n], c)
		for i := range n {
			if bits(buf[i]) != bits(c) {
				t.Fatalf("%T n=%d [%d]: got %#x, want %#x", c, n, i, bits(buf[i]), bits(c))
			}
		}
		if buf[n] != 7 {
			t.Fatalf("%T n=%d: wrote past dst", c, n)
		}
	}
}
