package gemm

import "github.com/nabla-go/nabla/internal/kernel/parallel"

// A product with B transposed, C = A·Bᵀ, reads both operands along the
// depth: each entry of C is a dot product of a row of A and a row of B.
// When A has few rows (a batch through a layer's weight, W stored
// out×in), packing B would cost much of the arithmetic it feeds, so such
// products run as 3×4 tiles of dot products straight from the operands as
// stored.

// useDots reports whether p runs as tiles of dot products.
// Measured on products of float64 (dots against packing, AVX-512 and
// AVX2): the tiles win for A of up to 16 rows, and up to 64 rows when the
// dot products are long (depth 256 and more, where their sums amortise);
// at 64×64×64, 128×128×128 or 256×64×64 packing B wins by 1.3–1.6×.
func useDots(p Product) bool {
	return p.TransB && !p.TransA && p.K >= 64 && p.M >= 3 && p.N >= 4 && (p.M <= 16 || p.M <= 64 && p.K >= 256)
}

// dotRun is one such product, a parallel.Task over ranges of C's columns.
type dotRun[E elem] struct {
	k       *kernel[E]
	p       Product
	a, b, c []E
	parts   int
}

type dotKey[E elem] struct{}

// mulDots computes p as tiles of dot products, its columns spread over
// e's threads. Each entry is computed the same way whatever the threads.
func mulDots[E elem](e *parallel.Exec, k *kernel[E], p Product, a, b, c []E) {
	threads := 1
	if p.M*p.N*p.K >= parallelMin {
		threads = e.Threads()
	}
	if threads == 1 {
		r := dotRun[E]{k: k, p: p, a: a, b: b, c: c, parts: 1}
		r.Do(0)
		return
	}
	r := e.State(dotKey[E]{}, func() any { return new(dotRun[E]) }).(*dotRun[E])
	*r = dotRun[E]{k: k, p: p, a: a, b: b, c: c, parts: threads}
	e.Parallel(threads, r)
	r.a, r.b, r.c = nil, nil, nil
}

// Do computes part's share of C's columns, in whole blocks of four.
func (r *dotRun[E]) Do(part int) {
	blocks := (r.p.N + 3) / 4
	j0, j1 := part*blocks/r.parts*4, min((part+1)*blocks/r.parts*4, r.p.N)
	k, p, a, b, c := r.k, r.p, r.a, r.b, r.c
	kv := p.K - p.K%k.lanes
	for j := j0; j < j1; j += 4 {
		if j+4 > p.N { // the last columns, one dot product each
			for jj := j; jj < p.N; jj++ {
				for i := range p.M {
					set(&c[i*p.Ldc+jj], k.dot(p.K, &a[i*p.Lda], &b[jj*p.Ldb]), p.Acc)
				}
			}
			break
		}
		i := 0
		for ; i+3 <= p.M; i += 3 {
			k.dotTile(kv, &a[i*p.Lda], p.Lda, &b[j*p.Ldb], p.Ldb, &c[i*p.Ldc+j], p.Ldc, p.Acc)
			if kv == p.K {
				continue
			}
			for y := range 3 {
				ar := a[(i+y)*p.Lda+kv : (i+y)*p.Lda+p.K]
				for x := range 4 {
					br := b[(j+x)*p.Ldb+kv : (j+x)*p.Ldb+p.K]
					var s E
					for l, v := range ar {
						s += v * br[l]
					}
					c[(i+y)*p.Ldc+j+x] += s
				}
			}
		}
		for ; i < p.M; i++ { // the last rows
			for x := range 4 {
				set(&c[i*p.Ldc+j+x], k.dot(p.K, &a[i*p.Lda], &b[(j+x)*p.Ldb]), p.Acc)
			}
		}
	}
}
