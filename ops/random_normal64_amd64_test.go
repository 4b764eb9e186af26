//go:build amd64 && !amd64.v3 && !amd64.v4

package ops

import (
	"math"
	"testing"
)

// Where the compiler fuses no multiply-add (amd64 below v3), the float64
// normals' fixed procedure gives math.Log's and math.Sincos's values, as
// the draws did before they had a procedure of their own: over 2²⁰ pairs
// of uniforms and u at both sides of the log's split at √½.
func TestNormalPair64IsMathOnAMD64(t *testing.T) {
	check := func(u, v float64) {
		t.Helper()
		r := math.Sqrt(-2 * math.Log(u))
		s, c := math.Sincos(2 * math.Pi * v)
		a, b := normalPair64(u, v)
		if math.Float64bits(a) != math.Float64bits(r*c) || math.Float64bits(b) != math.Float64bits(r*s) {
			t.Fatalf("u %v, v %v: got (%v, %v), math gives (%v, %v)", u, v, a, b, r*c, r*s)
		}
	}
	x := uint64(0x9e3779b97f4a7c15)
	next := func() float64 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return (float64(x>>11) + 0.5) * 0x1p-53
	}
	for range 1 << 20 {
		check(next(), next())
	}
	for _, e := range []int{-1, -2, -30, -54} {
		h := math.Ldexp(math.Sqrt2/2, e)
		for _, u := range []float64{math.Nextafter(h, 0), h, math.Nextafter(h, 1)} {
			for _, v := range []float64{0x1p-54, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1 - 0x1p-54} {
				check(u, v)
			}
		}
	}
}

// exp64, math.Exp's procedure in Go (which amd64's assembly, another
// method, replaces), agrees with math.Exp to 2⁻⁵⁰ relative over the range
// the random ops use, and at the special cases.
func TestExp64(t *testing.T) {
	for _, x := range []float64{0, -0x1p-29, 0x1p-29, 1, -1, -700, -745.1, -746, 709.7, 710, math.Inf(-1), math.Inf(1)} {
		got, want := exp64(x), math.Exp(x)
		if got != want && math.Abs(got-want) > 0x1p-50*want {
			t.Errorf("exp64(%v) = %v, want %v", x, got, want)
		}
	}
	if !math.IsNaN(exp64(math.NaN())) {
		t.Errorf("exp64(NaN) = %v", exp64(math.NaN()))
	}
	x := uint64(0x9e3779b97f4a7c15)
	for range 1 << 18 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v := -float64(x>>11) * 0x1p-53 * 740
		got, want := exp64(v), math.Exp(v)
		if math.Abs(got-want) > max(0x1p-50*want, 0x1p-1072) {
			t.Fatalf("exp64(%v) = %v, want %v", v, got, want)
		}
	}
}
