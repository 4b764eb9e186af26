package ops

import (
	"math"

	"github.com/nabla-go/nabla/internal/kernel/philox"
)

// float32 normals are computed in float32 arithmetic by the procedure
// below, every product rounded before it is added (no fused
// multiply-adds), so that another implementation doing the same float32
// operations in the same order (a GPU kernel, say) gets the same bits: a
// Box–Muller pair from two words w₀, w₁, with u = w₀·2⁻³² + 2⁻³³ and
// v = w₁·2⁻³² + 2⁻³³ in (0, 1], is r·cos 2πv and r·sin 2πv with
// r = √(−2·log u), log from Cephes' logf and the sine and cosine from
// Cephes' sinf and cosf polynomials on [−π/4, π/4] after reducing 4v to
// the nearest quarter turn. Both are within a few ulps of the exact
// functions (TestNormal32Accuracy), about five times faster than math's
// float64 Log and Sincos.

// normalPair32 maps two words to two standard normal values. It is the
// reference that philox.Pair and philox.Normals32, the loops that fill
// large draws, repeat bit for bit with branches turned into masks.
func normalPair32(w0, w1 uint32) (float32, float32) {
	u := float32(w0)*0x1p-32 + 0x1p-33
	v := float32(w1)*0x1p-32 + 0x1p-33
	r := float32(math.Sqrt(float64(-2 * log32(u))))
	s, c := sincosTurns32(v)
	return r * c, r * s
}

// logCoefficients32 are Cephes' logf polynomial's, highest degree first
// (the GPU kernel's source is written from them too).
var logCoefficients32 = philox.LogCoefficients32

// log32 is Cephes' logf for x in (0, 1], a normal float32.
func log32(x float32) float32 {
	b := math.Float32bits(x)
	e := float32(int32(b>>23) - 126) // x = m·2^e, m in [½, 1)
	m := math.Float32frombits(b&0x007fffff | 0x3f000000)
	if m < 0.70710678118654752 {
		e--
		m = m + m - 1
	} else {
		m--
	}
	z := float32(m * m)
	y := logCoefficients32[0]
	for _, c := range logCoefficients32[1:] {
		y = float32(y*m) + c
	}
	y = float32(float32(y*m) * z)
	y += float32(-2.12194440e-4 * e)
	y -= float32(0.5 * z)
	return m + y + float32(0.693359375*e)
}

// sincosTurns32 returns sin 2πv and cos 2πv for v in [0, 1].
func sincosTurns32(v float32) (sin, cos float32) {
	t := 4 * v                   // quarter turns, exactly
	q := float32(int32(t + 0.5)) // the nearest quarter turn
	x := float32((t - q) * (math.Pi / 2))
	z := float32(x * x)
	s := float32(float32(float32(-1.9515295891e-4*z)+8.3321608736e-3)*z) - 1.6666654611e-1
	s = x + float32(float32(x*z)*s)
	c := float32(float32(float32(2.443315711809948e-5*z)-1.388731625493765e-3)*z) + 4.166664568298827e-2
	c = 1 - float32(0.5*z) + float32(float32(z*z)*c)
	switch int32(q) & 3 {
	case 0:
		return s, c
	case 1:
		return c, -s
	case 2:
		return -s, -c
	}
	return -c, s
}
