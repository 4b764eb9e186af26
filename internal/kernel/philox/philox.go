package philox

import "math"

// Philox-4x32-10's round multipliers and key increments (the golden ratio
// and √3 − 1).
const (
	M0 = 0xD2511F53
	M1 = 0xCD9E8D57
	W0 = 0x9E3779B9
	W1 = 0xBB67AE85
)

// LogCoefficients32 are Cephes' logf polynomial's, highest degree first.
var LogCoefficients32 = [...]float32{logC0, logC1, logC2, logC3, logC4, logC5, logC6, logC7, logC8}

const (
	logC0 float32 = 7.0376836292e-2
	logC1 float32 = -1.1514610310e-1
	logC2 float32 = 1.1676998740e-1
	logC3 float32 = -1.2420140846e-1
	logC4 float32 = 1.4249322787e-1
	logC5 float32 = -1.6668057665e-1
	logC6 float32 = 2.0000714765e-1
	logC7 float32 = -2.4999993993e-1
	logC8 float32 = 3.3333331174e-1
)

// sqrtHalfBits is the bits of float32(√½), Cephes' split of the mantissa.
var sqrtHalfBits = math.Float32bits(0.70710678118654752)

// Normals32 sets out, whose length is a multiple of 4, to the standard
// normal values of blocks ctr[0], ctr[0]+1, ... (the block index wrapping
// at 2³²) of the counter (·, ctr[1], ctr[2], ctr[3]) under key: words 0
// and 1 of a block give its values 0 and 1, words 2 and 3 values 2 and 3.
func Normals32(out []float32, ctr [4]uint32, key [2]uint32) {
	b := ctr[0]
	if n := len(out) &^ 31; useAsm && n > 0 {
		normals32AVX2(out[:n], &[6]uint32{b, ctr[1], ctr[2], ctr[3], key[0], key[1]})
		out = out[n:]
		b += uint32(n / 4)
	}
	for len(out) >= 8 {
		x, y := Blocks2(b, ctr[1], ctr[2], ctr[3], key[0], key[1])
		o := (*[8]float32)(out)
		o[0], o[1] = Pair(x[0], x[1])
		o[2], o[3] = Pair(x[2], x[3])
		o[4], o[5] = Pair(y[0], y[1])
		o[6], o[7] = Pair(y[2], y[3])
		out = out[8:]
		b += 2
	}
	if len(out) >= 4 {
		x, _ := Blocks2(b, ctr[1], ctr[2], ctr[3], key[0], key[1])
		o := (*[4]float32)(out)
		o[0], o[1] = Pair(x[0], x[1])
		o[2], o[3] = Pair(x[2], x[3])
	}
}

// Blocks2 returns the Philox-4x32-10 blocks of the counters (b, c1, c2,
// c3) and (b+1, c1, c2, c3) under the key (k0, k1), their rounds
// interleaved so that the two chains of multiplications overlap.
func Blocks2(b, c1, c2, c3, k0, k1 uint32) (x, y [4]uint32) {
	a0, a1, a2, a3 := b, c1, c2, c3
	b0, b1, b2, b3 := b+1, c1, c2, c3
	for r := 0; ; r++ {
		pa0 := uint64(M0) * uint64(a0)
		pb0 := uint64(M0) * uint64(b0)
		pa1 := uint64(M1) * uint64(a2)
		pb1 := uint64(M1) * uint64(b2)
		a0, a1, a2, a3 = uint32(pa1>>32)^a1^k0, uint32(pa1), uint32(pa0>>32)^a3^k1, uint32(pa0)
		b0, b1, b2, b3 = uint32(pb1>>32)^b1^k0, uint32(pb1), uint32(pb0>>32)^b3^k1, uint32(pb0)
		if r == 9 {
			return [4]uint32{a0, a1, a2, a3}, [4]uint32{b0, b1, b2, b3}
		}
		k0 += W0
		k1 += W1
	}
}

// Pair maps two words to a Box–Muller pair, r·cos 2πv and r·sin 2πv with
// r = √(−2·log u), u = w0·2⁻³² + 2⁻³³ and v = w1·2⁻³² + 2⁻³³, by the
// float32 operations of the reference (Cephes' logf, and Cephes' sinf and
// cosf polynomials after reducing 4v to the nearest quarter turn), with
// the branches replaced by integer selections that give the same bits.
func Pair(w0, w1 uint32) (float32, float32) {
	// log u
	u := float32(w0)*0x1p-32 + 0x1p-33
	ub := math.Float32bits(u)
	mb := ub&0x007fffff | 0x3f000000 // u = m·2^e, m in [½, 1)
	lt := (mb - sqrtHalfBits) >> 31  // m < √½: take 2m and e−1 (2m is exact)
	e := float32(int32(ub>>23) - 126 - int32(lt))
	m := math.Float32frombits(mb+lt<<23) - 1
	z := float32(m * m)
	y := float32(logC0*m) + logC1
	y = float32(y*m) + logC2
	y = float32(y*m) + logC3
	y = float32(y*m) + logC4
	y = float32(y*m) + logC5
	y = float32(y*m) + logC6
	y = float32(y*m) + logC7
	y = float32(y*m) + logC8
	y = float32(float32(y*m) * z)
	y += float32(-2.12194440e-4 * e)
	y -= float32(0.5 * z)
	lg := m + y + float32(0.693359375*e)
	r := float32(math.Sqrt(float64(-2 * lg)))

	// sin 2πv and cos 2πv
	v := float32(w1)*0x1p-32 + 0x1p-33
	t := 4 * v           // quarter turns, exactly
	qi := int32(t + 0.5) // the nearest quarter turn
	x := float32((t - float32(qi)) * (math.Pi / 2))
	z = float32(x * x)
	s := float32(float32(float32(-1.9515295891e-4*z)+8.3321608736e-3)*z) - 1.6666654611e-1
	s = x + float32(float32(x*z)*s)
	c := float32(float32(float32(2.443315711809948e-5*z)-1.388731625493765e-3)*z) + 4.166664568298827e-2
	c = 1 - float32(0.5*z) + float32(float32(z*z)*c)
	// quadrant q: (sin, cos) = (s, c), (c, −s), (−s, −c), (−c, s)
	q := uint32(qi)
	sb, cb := math.Float32bits(s), math.Float32bits(c)
	swap := (sb ^ cb) & -(q & 1)
	sin := math.Float32frombits(sb ^ swap ^ (q&2)<<30)
	cos := math.Float32frombits(cb ^ swap ^ ((q+1)&2)<<30)
	return r * cos, r * sin
}

// Normals64 sets the longest prefix of out whose length is a multiple of
// 16 to the float64 standard normal values of blocks ctr[0], ctr[0]+1, ...
// (the block index wrapping at 2³²) of the counter (·, ctr[1], ctr[2],
// ctr[3]) under key, two a block, and returns its length: 0 where the
// assembly does not run (no AVX2, other processors, the purego tag), the
// caller computing the values itself. Block b's words w₀…w₃ give u and v
// from the top 53 bits of w₀w₁ and w₂w₃, plus ½, times 2⁻⁵³, and the
// values √(−2·log u)·cos 2πv and √(−2·log u)·sin 2πv, with log, sine and
// cosine as Go's math.Log and math.Sincos compute them on amd64 (no fused
// multiply-adds), so that they equal that scalar code's bit for bit.
func Normals64(out []float64, ctr [4]uint32, key [2]uint32) int {
	n := len(out) &^ 15
	if !useAsm || n == 0 {
		return 0
	}
	normals64AVX2(out[:n], &[6]uint32{ctr[0], ctr[1], ctr[2], ctr[3], key[0], key[1]})
	return n
}
