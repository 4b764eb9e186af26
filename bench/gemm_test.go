package bench

import (
	"fmt"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// GEMM: C = A·B for square n×n matrices through a compiled MatMul, in both
// dtypes, on 1 and GOMAXPROCS threads, in GFLOP/s (2n³ flops a product).
// The operands are parameters, so a run copies nothing in. bench/blas
// measures OpenBLAS on the same products, and go run ./bench/peak the
// machine's peak.

var gemmSizes = []int{64, 256, 1024}

func BenchmarkGEMM(b *testing.B) {
	for _, dtype := range dtypes {
		for _, n := range gemmSizes {
			for _, threads := range benchThreads() {
				b.Run(fmt.Sprintf("%s/n=%d/threads=%d", dtypeName(dtype), n, threads), func(b *testing.B) {
					g := graph.New()
					a := g.Param("A", mustDense(dtype, uniform(41, n*n, 1), n, n))
					c := g.Param("B", mustDense(dtype, uniform(42, n*n, 1), n, n))
					prog, err := compile.Compile([]*graph.Node{ops.MatMul(a, c)})
					if err != nil {
						b.Fatal(err)
					}
					m := newMachine(b, prog, threads)
					defer m.Close()
					benchRuns(b, m, nil)
					b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}
