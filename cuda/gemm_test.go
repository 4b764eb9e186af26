package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// gemmCase is a matrix product in logical form: for each of g.batch
// matrices, op(A) (m×k, element (i, l) at i*k+l), op(B) (k×n) and the C
// before (m×n), laid out in column-major buffers as g says.
type gemmCase struct {
	g         gemmCall
	opA, opB  [][]float64
	c0        [][]float64
	padding   float64 // in the buffers' unused elements
	a, b, cin []float64
}

// gemmCases are products of every shape of gemmCall: transposed or not,
// one matrix or a batch, beta 0 or 1, leading dimensions and strides
// longer than needed, and empty sizes.
func gemmCases(f32 bool) []*gemmCase {
	rng := rand.New(rand.NewPCG(7, 11))
	var cases []*gemmCase
	for _, s := range []struct{ m, n, k, batch, pad int }{
		{1, 1, 1, 1, 0}, {5, 3, 4, 1, 0}, {17, 9, 33, 1, 2}, {64, 48, 40, 3, 1}, {7, 1, 130, 4, 3}, {3, 5, 0, 2, 0}, {0, 4, 2, 1, 0},
	} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, beta := range []float64{0, 1} {
					cases = append(cases, newGemmCase(rng, f32, ta, tb, s.m, s.n, s.k, s.batch, s.pad, beta))
				}
			}
		}
	}
	return cases
}

func newGemmCase(rng *rand.Rand, f32, ta, tb bool, m, n, k, batch, pad int, beta float64) *gemmCase {
	rowsA, colsA := m, k
	if ta {
		rowsA, colsA = k, m
	}
	rowsB, colsB := k, n
	if tb {
		rowsB, colsB = n, k
	}
	g := gemmCall{f32: f32, transA: ta, transB: tb, m: m, n: n, k: k, batch: batch, beta: beta,
		lda: max(1, rowsA) + pad, ldb: max(1, rowsB) + pad, ldc: max(1, m) + pad}
	if batch > 1 {
		g.strideA = int64(g.lda*colsA + pad)
		g.strideB = int64(g.ldb*colsB + 2*pad)
		g.strideC = int64(g.ldc*n + pad)
	}
	c := &gemmCase{g: g, padding: 1e30}
	if f32 {
		c.padding = float64(float32(c.padding))
	}
	size := func(stride int64, ld, cols int) int { return int(stride)*(batch-1) + ld*cols }
	fill := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = c.padding
		}
		return v
	}
	c.a, c.b, c.cin = fill(size(g.strideA, g.lda, colsA)), fill(size(g.strideB, g.ldb, colsB)), fill(size(g.strideC, g.ldc, n))
	random := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = 2*rng.Float64() - 1
			if f32 {
				v[i] = float64(float32(v[i]))
			}
		}
		return v
	}
	for p := range batch {
		opA, opB, c0 := random(m*k), random(k*n), random(m*n)
		c.opA, c.opB, c.c0 = append(c.opA, opA), append(c.opB, opB), append(c.c0, c0)
		for i := range m {
			for l := range k {
				c.a[c.indexA(p, i, l)] = opA[i*k+l]
			}
		}
		for l := range k {
			for j := range n {
				c.b[c.indexB(p, l, j)] = opB[l*n+j]
			}
		}
		for i := range m {
			for j := range n {
				c.cin[c.indexC(p, i, j)] = c0[i*n+j]
			}
		}
	}
	return c
}

// indexA is where element (i, l) of op(A) of matrix p lies in the A
// buffer; indexB and indexC likewise.
func (c *gemmCase) indexA(p, i, l int) int {
	if c.g.transA {
		i, l = l, i
	}
	return int(c.g.strideA)*p + i + l*c.g.lda
}

func (c *gemmCase) indexB(p, l, j int) int {
	if c.g.transB {
		l, j = j, l
	}
	return int(c.g.strideB)*p + l + j*c.g.ldb
}

func (c *gemmCase) indexC(p, i, j int) int { return int(c.g.strideC)*p + i + j*c.g.ldc }

func (c *gemmCase) String() string {
	g := c.g
	return fmt.Sprintf("f32=%v transA=%v transB=%v m=%d n=%d k=%d lda=%d ldb=%d ldc=%d strides=%d,%d,%d batch=%d beta=%v",
		g.f32, g.transA, g.transB, g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.strideA, g.strideB, g.strideC, g.batch, g.beta)
}

// check compares got, the C buffer after the product, with the product
// of the logical matrices, to tol relative, and the padding with itself.
func (c *gemmCase) check(got []float64, tol float64) error {
	inC := make([]bool, len(got))
	for p := range c.g.batch {
		for i := range c.g.m {
			for j := range c.g.n {
				want := c.g.beta * c.c0[p][i*c.g.n+j]
				scale := math.Abs(want)
				for l := range c.g.k {
					x := c.opA[p][i*c.g.k+l] * c.opB[p][l*c.g.n+j]
					want += x
					scale += math.Abs(x)
				}
				e := c.indexC(p, i, j)
				inC[e] = true
				if math.Abs(got[e]-want) > tol*max(1, scale) {
					return fmt.Errorf("%v: C[%d](%d,%d) = %v, want %v", c, p, i, j, got[e], want)
				}
			}
		}
	}
	for e, in := range inC {
		if !in && got[e] != c.padding {
			return fmt.Errorf("%v: element %d of C's padding is %v", c, e, got[e])
		}
	}
	return nil
}

// cublasReference computes what cuBLAS's call a does to c, a's arguments
// read as the cuBLAS documentation defines them.
func cublasReference(a cublasGemm, A, B, C []float64) {
	batch, sa, sb, sc := 1, int64(0), int64(0), int64(0)
	if a.batched {
		batch, sa, sb, sc = int(a.batch), a.strideA, a.strideB, a.strideC
	}
	at := func(M []float64, base int64, trans int32, ld int32, r, col int) float64 {
		if trans == cublasOpT {
			r, col = col, r
		}
		return M[base+int64(r)+int64(col)*int64(ld)]
	}
	for p := range batch {
		for i := range int(a.m) {
			for j := range int(a.n) {
				var s float64
				for l := range int(a.k) {
					s += at(A, int64(p)*sa, a.transa, a.lda, i, l) * at(B, int64(p)*sb, a.transb, a.ldb, l, j)
				}
				e := int64(p)*sc + int64(i) + int64(j)*int64(a.ldc)
				if a.beta != 0 {
					s += a.beta * C[e]
				}
				C[e] = s
			}
		}
	}
}

// gemmArgs maps every shape of gemmCall onto the cuBLAS call that
// computes it: cuBLAS's documented semantics, applied to the arguments,
// give the logical product.
func TestGemmArgs(t *testing.T) {
	for _, f32 := range []bool{false, true} {
		for _, c := range gemmCases(f32) {
			a, err := gemmArgs(&c.g)
			if err != nil {
				t.Fatalf("%v: %v", c, err)
			}
			prec := map[bool]string{false: "D", true: "S"}[f32]
			want := "cublas" + prec + "gemm_v2"
			if c.g.batch > 1 {
				want = "cublas" + prec + "gemmStridedBatched"
			}
			if a.fn != want || a.batched != (c.g.batch > 1) {
				t.Errorf("%v: %s (batched %v), want %s", c, a.fn, a.batched, want)
			}
			got := append([]float64(nil), c.cin...)
			cublasReference(a, c.a, c.b, got)
			if err := c.check(got, 1e-14); err != nil {
				t.Error(err)
			}
		}
	}
}

// gemmArgs refuses what cuBLAS would, saying what.
func TestGemmArgsRefuses(t *testing.T) {
	ok := gemmCall{m: 4, n: 3, k: 2, lda: 4, ldb: 2, ldc: 4, batch: 1}
	for _, c := range []struct {
		change func(g *gemmCall)
		want   string
	}{
		{func(g *gemmCall) { g.lda = 3 }, "leading dimensions"},
		{func(g *gemmCall) { g.transA, g.lda = true, 1 }, "leading dimensions"}, // A is k×m: lda >= k = 2
		{func(g *gemmCall) { g.transB = true }, "leading dimensions"},           // B is n×k: ldb >= n = 3
		{func(g *gemmCall) { g.ldc = 1 }, "leading dimensions"},
		{func(g *gemmCall) { g.beta = 0.5 }, "beta"},
		{func(g *gemmCall) { g.batch = 0 }, "batch"},
		{func(g *gemmCall) { g.m = -1 }, "out of range"},
		{func(g *gemmCall) { g.k = math.MaxInt32 + 1 }, "out of range"},
		{func(g *gemmCall) { g.batch, g.strideB = 2, -1 }, "stride"},
	} {
		g := ok
		c.change(&g)
		_, err := gemmArgs(&g)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error about %s", g, err, c.want)
		}
	}
	if _, err := gemmArgs(&ok); err != nil {
		t.Errorf("%+v: %v", ok, err)
	}
}
