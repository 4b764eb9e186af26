package vek

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// adamM32Element is AdamM32's documented arithmetic for one element, in
// Go's scalar operations (each conversion rounds, so nothing is fused).
func adamM32Element(p, g float64, m, v float32, k *AdamScalars[float64]) (p1 float64, m1, v1 float32) {
	if k.Mode == L2Decay {
		g += float64(p * k.Decay)
	}
	γ := float32(g)
	b1, c1, b2, c2 := float32(k.Beta1), float32(k.OneMinusBeta1), float32(k.Beta2), float32(k.OneMinusBeta2)
	m1 = float32(m*b1) + float32(γ*c1)
	v1 = float32(v*b2) + float32(float32(γ*γ)*c2)
	root := float32(math.Sqrt(float64(v1)))
	δ := float32(float32(k.StepSize) * (m1 / (root/float32(k.Correction) + float32(k.Eps))))
	if k.Mode == DecoupledDecay {
		p = float64(p * k.Decay)
	}
	return p - float64(δ), m1, v1
}

// sameFloat reports whether x and y have the same bits or are both NaNs.
func sameFloat[T Float](x, y T) bool {
	return bits(x) == bits(y) || x != x && y != y
}

// TestAdamM32: AdamM32 gives, on every length up to 300, into fresh
// outputs and in place, each element's documented float32 moments and
// float64 parameter (an element at a time in Go's scalar arithmetic), on
// ordinary and special values and scalars, with every decay and a bias
// correction of 1 or not, with the AVX-512 kernels (and the Go loops for
// the last elements) and with the Go loops alone; it writes nothing past
// the outputs' ends.
func TestAdamM32(t *testing.T) {
	adamImplementations(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for round := range 30 {
			const n = 300
			mode := AdamDecay(round % 3)
			k := AdamScalars[float64]{0.9, 0.1, 0.999, 0.001, 0.01 / 0.19, 0.0447, 1e-8, 0.99, mode}
			switch round % 5 {
			case 4:
				s := values64(rng, 8)
				k = AdamScalars[float64]{s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], mode}
			case 2:
				k.Correction = 1
			}
			p, g, m, v := values64(rng, n), values64(rng, n), values32(rng, n), values32(rng, n)
			for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 255, 256, 257, n} {
				checkAdamM32(t, p[:n], g[:n], m[:n], v[:n], &k)
			}
		}
	})
}

func checkAdamM32(t *testing.T, p, g []float64, m, v []float32, k *AdamScalars[float64]) {
	t.Helper()
	n := len(p)
	for _, inPlace := range []bool{false, true} {
		p1, m1, v1 := make([]float64, n+guard), make([]float32, n+guard), make([]float32, n+guard)
		for i := n; i < n+guard; i++ {
			p1[i], m1[i], v1[i] = -7.5, -7.5, -7.5
		}
		pin, min, vin := p, m, v
		if inPlace {
			copy(p1, p)
			copy(m1, m)
			copy(v1, v)
			pin, min, vin = p1[:n], m1[:n], v1[:n]
		}
		AdamM32(p1[:n], m1[:n], v1[:n], pin, g, min, vin, k)
		for i := range n {
			wp, wm, wv := adamM32Element(p[i], g[i], m[i], v[i], k)
			if !sameFloat(p1[i], wp) || !sameFloat(m1[i], wm) || !sameFloat(v1[i], wv) {
				t.Fatalf("n=%d in place=%v [%d]: p=%v g=%v m=%v v=%v, %+v: got p1 %v m1 %v v1 %v, want %v %v %v",
					n, inPlace, i, p[i], g[i], m[i], v[i], *k, p1[i], m1[i], v1[i], wp, wm, wv)
			}
		}
		for i := n; i < n+guard; i++ {
			if p1[i] != -7.5 || m1[i] != -7.5 || v1[i] != -7.5 {
				t.Fatalf("n=%d: wrote element %d past the end", n, i)
			}
		}
	}
}

// BenchmarkAdamM32 times AdamM32 in place over W1's first weight (784×256
// elements) and a small slice, beside BenchmarkAdam's float64 step.
// ns/element is the time per element.
func BenchmarkAdamM32(b *testing.B) {
	for _, n := range []int{2048, 784 * 256} {
		p, g, m, v := make([]float64, n), make([]float64, n), make([]float32, n), make([]float32, n)
		for i := range p {
			p[i], g[i] = float64(i%97)/97, (float64(i%89)-44.5)/89 // no zero gradient: no subnormal moments
		}
		for _, corr := range []float64{0.0447, 1} {
			name := map[bool]string{true: "nocorr", false: "corr"}[corr == 1]
			k := AdamScalars[float64]{Beta1: 0.9, OneMinusBeta1: 0.1, Beta2: 0.999, OneMinusBeta2: 0.001,
				StepSize: 0.01 / 0.19, Correction: corr, Eps: 1e-8}
			b.Run(fmt.Sprintf("%s/n=%d", name, n), func(b *testing.B) {
				for range b.N {
					AdamM32(p, m, v, p, g, m, v, &k)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/element")
			})
		}
	}
}
