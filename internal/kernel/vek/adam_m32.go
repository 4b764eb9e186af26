package vek

import "math"

// AdamM32 is Adam's step (see Adam) for float64 parameters whose moments
// m and v are float32: for each i of p1 (the other slices must be at
// least as long),
//
//	γ     = float32(g[i]), or float32(g[i] + p[i]*Decay) with L2Decay
//	m1[i] = m[i]*Beta1 + γ*OneMinusBeta1
//	v1[i] = v[i]*Beta2 + (γ*γ)*OneMinusBeta2
//	δ     = StepSize*(m1[i] / (sqrt(v1[i])/Correction + Eps))
//	p1[i] = p[i] - float64(δ), or p[i]*Decay - float64(δ) with DecoupledDecay
//
// where γ, m1, v1 and δ are float32 Adam's (Adam's arithmetic for
// float32, its scalars but Decay rounded to float32) and the decay's
// products and the difference float64 arithmetic, each operation rounded
// on its own (NaNs come out as NaNs, their payloads unspecified). With
// AVX-512 it reads every input once and writes every output once, 16
// elements at a time. An output may be one of the inputs of its type (p1
// over p, m1 over m, v1 over v), but must not overlap them otherwise.
func AdamM32(p1 []float64, m1, v1 []float32, p, g []float64, m, v []float32, k *AdamScalars[float64]) {
	n := len(p1)
	m1, v1, p, g, m, v = m1[:n], v1[:n], p[:n], g[:n], m[:n], v[:n]
	k32 := AdamScalars[float32]{
		Beta1: float32(k.Beta1), OneMinusBeta1: float32(k.OneMinusBeta1),
		Beta2: float32(k.Beta2), OneMinusBeta2: float32(k.OneMinusBeta2),
		StepSize: float32(k.StepSize), Correction: float32(k.Correction), Eps: float32(k.Eps),
	}
	mode := k.Mode
	if mode > DecoupledDecay {
		mode = NoDecay
	}
	done := 0
	if useAsm {
		recip, lo, hi := quotientRange(k32.Correction)
		ks := [11]float32{k32.Beta1, k32.OneMinusBeta1, k32.Beta2, k32.OneMinusBeta2, k32.StepSize, k32.Correction, k32.Eps, 0, recip, lo, hi}
		decay := [1]float64{k.Decay}
		w := n &^ 15
		if adamM32Wide(mode, k32.Correction == 1, p1[:w], m1[:w], v1[:w], p[:w], g[:w], m[:w], v[:w], ks[:], decay[:]) {
			done = w
		}
	}
	adamM32Go(mode, p1[done:], m1[done:], v1[done:], p[done:], g[done:], m[done:], v[done:], k.Decay, &k32)
}

// adamM32Go is AdamM32 as Go loops around float32 Adam, a block at a
// time: float32 Adam from a parameter of -0 gives -δ, the sign of a zero
// δ included, and p + (-δ) is p - δ.
func adamM32Go(mode AdamDecay, p1 []float64, m1, v1 []float32, p, g []float64, m, v []float32, decay float64, k32 *AdamScalars[float32]) {
	var gb, db, neg [adamBlock]float32
	for i := range neg {
		neg[i] = float32(math.Copysign(0, -1))
	}
	for lo := 0; lo < len(p1); lo += adamBlock {
		hi := min(lo+adamBlock, len(p1))
		gs, ds := gb[:hi-lo], db[:hi-lo]
		for i, x := range g[lo:hi] {
			if mode == L2Decay {
				x += float64(p[lo+i] * decay)
			}
			gs[i] = float32(x)
		}
		Adam(ds, m1[lo:hi], v1[lo:hi], neg[:hi-lo], gs, m[lo:hi], v[lo:hi], k32)
		for i, d := range ds {
			base := p[lo+i]
			if mode == DecoupledDecay {
				base = float64(base * decay)
			}
			p1[lo+i] = base + float64(d)
		}
	}
}
