package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The float64 kernel computes eight Philox blocks at once, as the float32
// one does, and each block's float64 Box–Muller pair, four blocks at a
// time, by the float64 operations of the reference in package ops: u and
// v from the top 53 bits of words 0–1 and 2–3, plus ½, times 2⁻⁵³; the
// pair √(−2·log u)·(cos, sin)(2π·v), with log as Go's math.Log computes
// it on amd64 (its assembly, FreeBSD's e_log.c) and the sine and cosine
// as math.Sincos does (Cephes' polynomials after reducing by π/4 in three
// parts), each an IEEE instruction (no fused multiply-adds), the branches
// as masks.

// k64 returns 32 bytes holding bits four times.
func k64(bits uint64) Mem { return splat(bits, 8) }

// d returns 32 bytes holding x four times.
func d(x float64) Mem { return k64(math.Float64bits(x)) }

// Cephes' sine and cosine coefficients, math's _sin and _cos.
var sinC = []float64{
	1.58962301576546568060e-10, // 0x3de5d8fd1fd19ccd
	-2.50507477628578072866e-8, // 0xbe5ae5e5a9291f5d
	2.75573136213857245213e-6,  // 0x3ec71de3567d48a1
	-1.98412698295895385996e-4, // 0xbf2a01a019bfdf03
	8.33333333332211858878e-3,  // 0x3f8111111110f7d0
	-1.66666666666666307295e-1, // 0xbfc5555555555548
}

var cosC = []float64{
	-1.13585365213876817300e-11, // 0xbda8fa49a0861a9b
	2.08757008419747316778e-9,   // 0x3e21ee9d7b4e3f05
	-2.75573141792967388112e-7,  // 0xbe927e4f7eac4bc6
	2.48015872888517045348e-5,   // 0x3efa01a019c844f5
	-1.38888888888730564116e-3,  // 0xbf56c16c16c14f91
	4.16666666666665929218e-2,   // 0x3fa555555555554b
}

// normals64 generates normals64AVX2.
func normals64() {
	blockLoop("normals64AVX2", "func(out []float64, c *[6]uint32)", "64", 4, []string{
		"normals64AVX2 sets out, whose length is a multiple of 16, to the float64",
		"normal values of the blocks c[0], c[0]+1, ... of the counter (·, c[1], c[2],",
		"c[3]) under the key (c[4], c[5]), two a block, 8 blocks at a time."},
		func(p Register, x [4]VecVirtual) {
			for half := range 2 {
				var w [4]VecVirtual
				for i := range w {
					var h Register = XMM()
					if half == 0 {
						h = x[i].AsX()
					} else {
						VEXTRACTI128(U8(1), x[i], h)
					}
					w[i] = YMM()
					VPMOVZXDQ(h, w[i])
				}
				u := unit53(w[0], w[1])
				v := unit53(w[2], w[3])
				a, c := boxMuller64(u, v)
				lo, hi := YMM(), YMM()
				VUNPCKLPD(c, a, lo)
				VUNPCKHPD(c, a, hi)
				o := YMM()
				VPERM2F128(U8(0x20), hi, lo, o)
				VMOVUPD(o, Mem{Base: p, Disp: 64 * half})
				VPERM2F128(U8(0x31), hi, lo, o)
				VMOVUPD(o, Mem{Base: p, Disp: 64*half + 32})
			}
		})
}

// exact returns the float64 value of each lane's integer, under 2⁵².
func exact(q VecVirtual) VecVirtual {
	r := YMM()
	VPOR(d(0x1p52), q, r)
	VSUBPD(d(0x1p52), r, r)
	return r
}

// unit53 returns (top 53 bits of hi·2³² + lo, plus ½)·2⁻⁵³ for the words
// hi and lo of each 64-bit lane: the integer is hi·2²¹ + lo>>11, exact.
func unit53(hi, lo VecVirtual) VecVirtual {
	l := YMM()
	VPSRLQ(U8(11), lo, l)
	h := exact(hi)
	VMULPD(d(0x1p21), h, h)
	VADDPD(exact(l), h, h)
	VADDPD(d(0.5), h, h)
	VMULPD(d(0x1p-53), h, h)
	return h
}

// boxMuller64 returns √(−2·log u)·cos 2πv and √(−2·log u)·sin 2πv.
func boxMuller64(u, v VecVirtual) (rc, rs VecVirtual) {
	// log u, as math.Log's assembly: u = f1·2^k with f1 in [½, 1), or
	// [√½, √2) after doubling it where f1 ≤ √½.
	f1, ke, t := YMM(), YMM(), YMM()
	VPAND(k64(0x000FFFFFFFFFFFFF), u, f1)
	VPOR(d(0.5), f1, f1)
	VPSRLQ(U8(52), u, ke)
	ke = exact(ke)
	VSUBPD(d(1022), ke, ke)
	VCMPPD(U8(2), d(7.07106781186547524401e-01), f1, t) // f1 ≤ √½
	VANDPD(d(1), t, t)
	VSUBPD(t, ke, ke)
	VADDPD(d(1), t, t)
	VMULPD(t, f1, f1)
	f := f1
	VSUBPD(d(1), f1, f)
	s, s2, s4 := YMM(), YMM(), YMM()
	VADDPD(d(2), f, t)
	VDIVPD(t, f, s)
	VMULPD(s, s, s2)
	VMULPD(s2, s2, s4)
	t1 := YMM()
	VMULPD(d(1.479819860511658591e-01), s4, t1) // L7
	VADDPD(d(1.818357216161805012e-01), t1, t1) // L5
	VMULPD(s4, t1, t1)
	VADDPD(d(2.857142874366239149e-01), t1, t1) // L3
	VMULPD(s4, t1, t1)
	VADDPD(d(6.666666666666735130e-01), t1, t1) // L1
	VMULPD(s2, t1, t1)
	t2 := YMM()
	VMULPD(d(1.531383769920937332e-01), s4, t2) // L6
	VADDPD(d(2.222219843214978396e-01), t2, t2) // L4
	VMULPD(s4, t2, t2)
	VADDPD(d(3.999999999940941908e-01), t2, t2) // L2
	VMULPD(s4, t2, t2)
	VADDPD(t2, t1, t1) // R
	hfsq := YMM()
	VMULPD(d(0.5), f, hfsq)
	VMULPD(f, hfsq, hfsq)
	VADDPD(hfsq, t1, t1)                         // hfsq + R
	VMULPD(t1, s, s)                             // s·(hfsq + R)
	VMULPD(d(1.90821492927058770002e-10), ke, t) // k·Ln2Lo
	VADDPD(t, s, s)
	VSUBPD(s, hfsq, hfsq)                         // hfsq − (s·(hfsq+R) + k·Ln2Lo)
	VSUBPD(f, hfsq, hfsq)                         // … − f
	VMULPD(d(6.93147180369123816490e-01), ke, ke) // k·Ln2Hi
	VSUBPD(hfsq, ke, ke)                          // log u
	r := ke
	VMULPD(d(-2), ke, r)
	VSQRTPD(r, r)

	// sin and cos of x = 2π·v, as math.Sincos for 0 < x < 2⁹
	x := v
	VMULPD(d(2*math.Pi), v, x)
	jf := YMM()
	VMULPD(d(4/math.Pi), x, jf)
	j := XMM()
	VCVTTPD2DQY(jf, j) // the octant, truncated
	one := XMM()
	VPAND(k(1).Offset(0), j, one)
	VPADDD(one, j, j) // odd octants to the next even one
	y := YMM()
	VCVTDQ2PD(j, y)
	z := YMM()
	VMULPD(d(7.85398125648498535156e-1), y, t) // y·PI4A
	VSUBPD(t, x, z)
	VMULPD(d(3.77489470793079817668e-8), y, t) // y·PI4B
	VSUBPD(t, z, z)
	VMULPD(d(2.69515142907905952645e-15), y, t) // y·PI4C
	VSUBPD(t, z, z)
	zz := YMM()
	VMULPD(z, z, zz)
	cs := poly(cosC, zz) // cos: 1 − ½·zz + zz²·P(zz)
	h := YMM()
	VMULPD(d(0.5), zz, h)
	c := YMM()
	VMOVUPD(d(1), c)
	VSUBPD(h, c, c)
	VMULPD(zz, zz, h)
	VMULPD(cs, h, h)
	VADDPD(h, c, c)
	sn := poly(sinC, zz) // sin: z + z·zz·Q(zz)
	VMULPD(zz, z, h)
	VMULPD(sn, h, h)
	VADDPD(h, z, sn)

	// octant j (even, 0 to 8): (sin, cos) = (s, c), (c, −s), (−s, −c),
	// (−c, s) for j mod 8 = 0, 2, 4, 6
	jq := YMM()
	VPMOVZXDQ(j, jq)
	swap, flip := YMM(), YMM()
	VPAND(k64(2), jq, swap)
	VPCMPEQQ(k64(2), swap, swap)
	VPSLLQ(U8(62), jq, flip) // bit 1 of j at the sign: cos's flip by j mod 4
	VPAND(k64(1<<63), flip, flip)
	VPSLLQ(U8(61), jq, t) // bit 2 at the sign: both flip
	VPAND(k64(1<<63), t, t)
	VPXOR(t, flip, flip)
	e := YMM()
	VXORPD(c, sn, e)
	VANDPD(swap, e, e)
	VXORPD(e, sn, sn)
	VXORPD(t, sn, sn)
	VXORPD(e, c, c)
	VXORPD(flip, c, c)
	VMULPD(r, c, c)
	VMULPD(r, sn, sn)
	return c, sn
}

// poly returns (…((p[0]·z + p[1])·z + p[2])·z … )·z + p[len−1].
func poly(p []float64, z VecVirtual) VecVirtual {
	y := YMM()
	VMULPD(d(p[0]), z, y)
	for i, c := range p[1:] {
		VADDPD(d(c), y, y)
		if i < len(p)-2 {
			VMULPD(z, y, y)
		}
	}
	return y
}
