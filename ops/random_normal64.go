package ops

import "math"

// float64 normals are Box–Muller pairs of 53-bit uniforms u in (0, 1)
// and v, r·cos 2πv and r·sin 2πv with r = √(−2·log u), computed by a
// fixed sequence of float64 operations, every product rounded before it
// is added (no fused multiply-adds): log as FreeBSD's e_log.c, in the
// order of Go's math.Log on amd64 (its assembly), and the sine and cosine
// as Go's math.Sincos (Cephes' polynomials after reducing by π/4 in three
// parts). These are the values math.Log and math.Sincos give on amd64
// built without fused multiply-adds (GOAMD64 v1 and v2), but fixed: math's
// Go code may be fused where the compiler chooses (GOAMD64=v3, arm64),
// which would change the draws with the build. philox.Normals64, the
// assembly filling large draws, repeats them bit for bit.

// Coefficients of math.Log (FreeBSD's e_log.c).
const (
	log64L1    = 6.666666666666735130e-01 // 3FE55555 55555593
	log64L2    = 3.999999999940941908e-01 // 3FD99999 9997FA04
	log64L3    = 2.857142874366239149e-01 // 3FD24924 94229359
	log64L4    = 2.222219843214978396e-01 // 3FCC71C5 1D8E78AF
	log64L5    = 1.818357216161805012e-01 // 3FC74664 96CB03DE
	log64L6    = 1.531383769920937332e-01 // 3FC39A09 D078C69F
	log64L7    = 1.479819860511658591e-01 // 3FC2F112 DF3E5244
	log64Ln2Hi = 6.93147180369123816490e-01
	log64Ln2Lo = 1.90821492927058770002e-10
)

// log64 is math.Log's amd64 procedure for a positive u (a subnormal one
// scaled by 2⁵⁴ first).
func log64(u float64) float64 {
	b, off := math.Float64bits(u), int64(1022)
	if b>>52 == 0 {
		b, off = math.Float64bits(u*0x1p54), 1022+54
	}
	f1 := math.Float64frombits(b&(1<<52-1) | 0x3FE0000000000000) // u = f1·2^k, f1 in [½, 1)
	k := float64(int64(b>>52) - off)
	if f1 <= 7.07106781186547524401e-01 {
		k--
		f1 *= 2
	}
	f := f1 - 1
	s := f / (2 + f)
	s2 := s * s
	s4 := s2 * s2
	t1 := float64(log64L7 * s4)
	t1 = float64((t1+log64L5)*s4) + log64L3
	t1 = float64(t1*s4) + log64L1
	t1 = float64(t1 * s2)
	t2 := float64(log64L6*s4) + log64L4
	t2 = float64(t2*s4) + log64L2
	t2 = float64(t2 * s4)
	hfsq := float64(0.5 * f * f)
	inner := float64(s*(hfsq+(t1+t2))) + float64(k*log64Ln2Lo)
	return float64(k*log64Ln2Hi) - ((hfsq - inner) - f)
}

// Cephes' sine and cosine coefficients, math's.
var (
	sin64C = [...]float64{
		1.58962301576546568060e-10, // 0x3de5d8fd1fd19ccd
		-2.50507477628578072866e-8, // 0xbe5ae5e5a9291f5d
		2.75573136213857245213e-6,  // 0x3ec71de3567d48a1
		-1.98412698295895385996e-4, // 0xbf2a01a019bfdf03
		8.33333333332211858878e-3,  // 0x3f8111111110f7d0
		-1.66666666666666307295e-1, // 0xbfc5555555555548
	}
	cos64C = [...]float64{
		-1.13585365213876817300e-11, // 0xbda8fa49a0861a9b
		2.08757008419747316778e-9,   // 0x3e21ee9d7b4e3f05
		-2.75573141792967388112e-7,  // 0xbe927e4f7eac4bc6
		2.48015872888517045348e-5,   // 0x3efa01a019c844f5
		-1.38888888888730564116e-3,  // 0xbf56c16c16c14f91
		4.16666666666665929218e-2,   // 0x3fa555555555554b
	}
)

// poly64 is (…(p[0]·z + p[1])·z … )·z + p[5], each product rounded.
func poly64(p *[6]float64, z float64) float64 {
	y := float64(p[0] * z)
	for _, c := range p[1:5] {
		y = float64((y + c) * z)
	}
	return y + p[5]
}

// sincos64 is math.Sincos's procedure for x in (0, 2⁹).
func sincos64(x float64) (sin, cos float64) {
	const (
		pi4A = 7.85398125648498535156e-1  // π/4 in three parts
		pi4B = 3.77489470793079817668e-8  //
		pi4C = 2.69515142907905952645e-15 //
	)
	j := uint64(x * (4 / math.Pi)) // the octant
	y := float64(j)
	if j&1 == 1 {
		j++
		y++
	}
	j &= 7
	z := ((x - float64(y*pi4A)) - float64(y*pi4B)) - float64(y*pi4C)
	zz := z * z
	cos = (1.0 - float64(0.5*zz)) + float64(float64(zz*zz)*poly64(&cos64C, zz))
	sin = z + float64(float64(z*zz)*poly64(&sin64C, zz))
	if j&2 != 0 {
		sin, cos = cos, -sin
	}
	if j&4 != 0 {
		sin, cos = -sin, -cos
	}
	return sin, cos
}

// normalPair64 maps u in (0, 1) and v to two standard normal values.
func normalPair64(u, v float64) (float64, float64) {
	r := math.Sqrt(-2 * log64(u))
	s, c := sincos64(float64(2 * math.Pi * v))
	return r * c, r * s
}

// exp64 is e^x by Go's math.Exp procedure in Go (FreeBSD's e_exp.c, the
// reduction by ln 2 in two parts and a rational approximation, then
// math.Ldexp), every product rounded, for the random ops that weigh
// classes (RandomCategorical): a fixed procedure another device repeats
// bit for bit, which math.Exp, assembly on amd64, is not.
func exp64(x float64) float64 {
	const (
		ln2Hi     = 6.93147180369123816490e-01
		ln2Lo     = 1.90821492927058770002e-10
		log2e     = 1.44269504088896338700e+00
		overflow  = 7.09782712893383973096e+02
		underflow = -7.45133219101941108420e+02
		nearZero  = 1.0 / (1 << 28)
		p1        = 1.66666666666666657415e-01
		p2        = -2.77777777770155933842e-03
		p3        = 6.61375632143793436117e-05
		p4        = -1.65339022054652515390e-06
		p5        = 4.13813679705723846039e-08
	)
	switch {
	case math.IsNaN(x) || x > overflow:
		return x * math.Inf(1)
	case x < underflow:
		return 0
	case -nearZero < x && x < nearZero:
		return 1 + x
	}
	var k int64
	if x < 0 {
		k = int64(float64(log2e*x) - 0.5)
	} else {
		k = int64(float64(log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*ln2Hi)
	lo := float64(float64(k) * ln2Lo)
	r := hi - lo
	t := float64(r * r)
	c := float64(t*p5) + p4
	c = float64(t*c) + p3
	c = float64(t*c) + p2
	c = float64(t*c) + p1
	c = r - float64(t*c)
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	return ldexp64(y, k)
}

// ldexp64 is y·2^k by math.Ldexp's procedure, for y in [½, 2) and k
// from exp64's reduction.
func ldexp64(y float64, k int64) float64 {
	b := math.Float64bits(y)
	e := k + int64(b>>52&0x7ff) - 1023
	switch {
	case e < -1075:
		return 0
	case e > 1023:
		return math.Inf(1)
	}
	m := 1.0
	if e < -1022 { // subnormal: scale once more, rounding once
		e += 53
		m = 0x1p-53
	}
	return m * math.Float64frombits(b&^(0x7ff<<52)|uint64(e+1023)<<52)
}
