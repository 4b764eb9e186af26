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
