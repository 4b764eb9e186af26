package ops

import (
	"fmt"
	"testing"
)

// BenchmarkSumToRows times SumTo's kernel on a batch of rows summed to
// one row (a layer's bias gradient in examples/charlm: 2048 rows of 64
// and of 256) and on each row summed (-each: a layer norm's), float32:
//
//	go test -run '^$' -bench SumToRows ./ops
func BenchmarkSumToRows(b *testing.B) {
	for _, n := range []int{64, 256} {
		b.Run(fmt.Sprintf("2048x%d", n), func(b *testing.B) {
			x, out := make([]float32, 2048*n), make([]float32, n)
			for i := range x {
				x[i] = float32(i%7) - 3
			}
			w := newReductionWalker([]int{2048, n}, []int{n})
			for range b.N {
				sumToKernel(&w, out, x)
			}
		})
		b.Run(fmt.Sprintf("2048x%d-each", n), func(b *testing.B) {
			x, out := make([]float32, 2048*n), make([]float32, 2048)
			for i := range x {
				x[i] = float32(i%7) - 3
			}
			w := newReductionWalker([]int{32, 64, n}, []int{32, 64, 1})
			for range b.N {
				sumToKernel(&w, out, x)
			}
		})
	}
}
