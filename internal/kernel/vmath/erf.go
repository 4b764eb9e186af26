package vmath

import "math"

// erf is computed as in FreeBSD's msun (the math package's erf), from
// its four rational approximations, with the ranges' coefficients in a
// table: the range of |x| picks a row of erfP and erfQ, one rational
// function P(t)/Q(t) of degree 7/8 (the shorter ones padded with zero
// coefficients) is evaluated on the range's variable t, and the result
// takes one of two forms:
//
//	|x| < 0.84375        t = x²      erf = x + x·P/Q
//	0.84375 ≤ |x| < 1.25 t = |x|-1   erf = erx + P/Q
//	1.25 ≤ |x| < 6       t = 1/x²    erf = 1 - e^(-z²-0.5625)·e^((z-|x|)(z+|x|)+P/Q)/|x|
//
// where z is |x| with its low 32 bits cleared, so that -z²-0.5625 is
// exact (erfExp takes the two parts of the exponent), and 1/|x| is
// |x|·(1/x²). |x| is clamped to 6, above which erf rounds to ±1.
const (
	erfX       = 8.45062911510467529297e-01 // erf(1) rounded to 24 bits
	erfSmall   = 0.84375
	erfMid     = 1.25
	erfTail    = 1 / 0.35
	erfClamp   = 6.0
	erfTailOff = 0.5625
)

// erfP and erfQ are the coefficients of P, lowest degree first, and of Q
// after its constant 1, for each range: |x| < 0.84375, < 1.25, < 1/0.35
// and above.
var erfP = [4][8]float64{
	{1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
		-5.77027029648944159157e-03, -2.37630166566501626084e-05},
	{-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
		3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
		-2.16637559486879084300e-03},
	{-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
		-6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
		-8.12874355063065934246e+01, -9.81432934416914548592e+00},
	{-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
		-1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
		-4.83519191608651397019e+02},
}

var erfQ = [4][8]float64{
	{3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
		1.32494738004321644526e-04, -3.96022827877536812320e-06},
	{1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
		1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02},
	{1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
		6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
		6.57024977031928170135e+00, -6.04244152148580987438e-02},
	{3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
		3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
		-2.24409524465858183362e+01},
}

// erf64 is the error function; ±0, ±Inf (±1) and NaN as in math.Erf.
// It branches on the tail, which saves the exponential for |x| < 1.25
// (most of a network's activations); the assembly computes both forms
// and blends them.
func erf64(x float64) float64 {
	a := min(math.Abs(x), erfClamp) // NaN passes
	k := 0
	if a >= erfSmall {
		k++
	}
	if a >= erfMid {
		k++
	}
	if a >= erfTail {
		k++
	}
	a2 := a * a
	t := a2
	if k == 1 {
		t = a - 1
	}
	var inv float64
	if k >= 2 {
		inv = 1 / a2
		t = inv
	}
	p, q := &erfP[k&3], &erfQ[k&3]
	num := p[0] + t*(p[1]+t*(p[2]+t*(p[3]+t*(p[4]+t*(p[5]+t*(p[6]+t*p[7]))))))
	den := 1 + t*(q[0]+t*(q[1]+t*(q[2]+t*(q[3]+t*(q[4]+t*(q[5]+t*(q[6]+t*q[7])))))))
	y := num / den
	var r float64
	if k >= 2 {
		z := math.Float64frombits(math.Float64bits(a) &^ (1<<32 - 1))
		r = 1 - erfExp(-z*z-erfTailOff, (z-a)*(z+a)+y)*(a*inv)
	} else {
		// x + x·y, or erx + y.
		c, m := a, a
		if k == 1 {
			c, m = erfX, 1
		}
		r = c + m*y
	}
	return math.Copysign(r, x)
}

// erfExp is e^(hi+lo) for hi an exact exponent in [-37, -2] and |lo| <
// 0.5, as exp64 computes it but with lo added after the reduction of hi,
// which is exact: hi - n·ln2Hi has no more bits than hi. The result is
// normal, so a single power of two scales it.
func erfExp(hi, lo float64) float64 {
	n := (hi+lo)*log2e + roundMagic - roundMagic
	r := (hi - n*ln2Hi) + lo - n*ln2Lo
	z := r * r
	a := exp2 + z*(exp4+z*(exp6+z*(exp8+z*(exp10+z*exp12))))
	b := exp3 + z*(exp5+z*(exp7+z*(exp9+z*(exp11+z*exp13))))
	p := 1 + (r + z*(a+r*b))
	return p * pow2(int64(n))
}

// gelu64 is x·Φ(x) = x/2·(1+erf(x/√2)), Φ the standard normal
// distribution function, as PyTorch's exact GELU computes it.
func gelu64(x float64) float64 { return x * 0.5 * (1 + erf64(x*sqrtHalf)) }

const sqrtHalf = 0.70710678118654752440 // 1/√2

// geluDeriv64 is GELU's derivative Φ(x) + x·φ(x), φ the standard normal
// density, with Φ(x) as erfc(-x/√2)/2, which does not cancel for x < 0.
func geluDeriv64(x float64) float64 {
	return 0.5*math.Erfc(-x*sqrtHalf) + x*math.Exp(-0.5*x*x)*invSqrt2Pi
}

const invSqrt2Pi = 0.39894228040143267794 // 1/√(2π)
