package vek

import (
	"fmt"
	"testing"
)

// BenchmarkKernels times each function on 256 elements (in L1), with the
// assembly and with the Go loops; ns/op / 256 is the time per element.
func BenchmarkKernels(b *testing.B) {
	defer setUseAsm(useAsm)
	for _, asm := range []bool{true, false} {
		if !setUseAsm(asm) {
			continue
		}
		impl := map[bool]string{true: "asm", false: "go"}[asm]
		benchType[float32](b, impl+"/f32")
		benchType[float64](b, impl+"/f64")
	}
}

func benchType[T Float](b *testing.B, prefix string) {
	const n = 256
	x, y, d := make([]T, n), make([]T, n), make([]T, n)
	for i := range x {
		x[i], y[i] = T(i+1), T(2*i+3)
	}
	names := []string{"Add", "Sub", "Mul", "Div"}
	for _, op := range binOps {
		b.Run(fmt.Sprintf("%s/%sVV", prefix, names[op]), func(b *testing.B) {
			for range b.N {
				VV(op, d, x, y)
			}
		})
		b.Run(fmt.Sprintf("%s/%sVS", prefix, names[op]), func(b *testing.B) {
			for range b.N {
				VS(op, d, x, 3)
			}
		})
		b.Run(fmt.Sprintf("%s/%sSV", prefix, names[op]), func(b *testing.B) {
			for range b.N {
				SV(op, d, 3, y)
			}
		})
	}
	for _, op := range unaryOps {
		b.Run(fmt.Sprintf("%s/%s", prefix, []string{"Neg", "Square", "Abs", "ReLU", "Sqrt"}[op]), func(b *testing.B) {
			for range b.N {
				Unary(op, d, x)
			}
		})
	}
}

// BenchmarkAdam times Adam's step in place, as the fused op runs it, over
// 2,048 elements (p, g, m and v in L1 and L2) and 200,704 (W1's first
// layer, 784·256: 3.2 MB of them in float32, 6.4 MB in float64, in L3 or
// memory), with the AVX-512 and AVX2 kernels and the Go loops, and
// PyTorch's division by the bias correction (corr) or without it (nocorr,
// as nn.AdamConfig.FoldCorrection builds it). ns/element is the time per
// element.
func BenchmarkAdam(b *testing.B) {
	defer setUseAsm(useAsm)
	defer setUseAVX512(useAVX512)
	for _, impl := range []struct {
		name      string
		asm, wide bool
	}{{"avx512", true, true}, {"avx2", true, false}, {"go", false, false}} {
		if setUseAsm(impl.asm) && setUseAVX512(impl.wide) {
			benchAdam[float32](b, impl.name+"/f32")
			benchAdam[float64](b, impl.name+"/f64")
		}
	}
}

func benchAdam[T Float](b *testing.B, prefix string) {
	for _, n := range []int{2048, 784 * 256} {
		p, g, m, v := make([]T, n), make([]T, n), make([]T, n), make([]T, n)
		for i := range p {
			p[i], g[i] = T(i%97)/97, T(i%89-44)/89
		}
		for _, corr := range []T{0.0447, 1} {
			name := map[bool]string{true: "nocorr", false: "corr"}[corr == 1]
			k := AdamScalars[T]{Beta1: 0.9, OneMinusBeta1: 0.1, Beta2: 0.999, OneMinusBeta2: 0.001,
				StepSize: 0.01 / 0.19, Correction: corr, Eps: 1e-8}
			b.Run(fmt.Sprintf("%s/%s/n=%d", prefix, name, n), func(b *testing.B) {
				for range b.N {
					Adam(p, m, v, p, g, m, v, &k)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/element")
			})
		}
	}
}
