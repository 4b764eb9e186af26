package gemm

import (
	"fmt"
	"unsafe"
)

// Products of a few rows by one matrix, c_r = a_r·B for r < m ≤ MaxRows,
// read each element of B once for all the rows: the rows' elements are
// broadcast against each row of B while a block of every row of C stays
// in registers. The rows may lie anywhere (each is its own slice), so a
// compiler can compute together products that share B, such as a
// network's input and its tangent through one weight, without copying
// the rows next to each other. Every element of C is computed with the
// operations Mul's matrix–vector product (m = 1) does for that row alone,
// so computing rows together changes no bit. (Mul's products of 2 to 4
// stacked rows keep the tiles of its larger products, whose bits a batch
// of such products stacked into one must keep.)

// MaxRows is the most rows MulRows multiplies together.
const MaxRows = 4

// fewRowsFunc is a kernel computing c_r (+)= a_r·B for r < m, 2 ≤ m ≤
// MaxRows, over n columns, a multiple of the kernel's lanes, and a depth k
// of at least 1; B's rows are ldb elements apart, and the pointers of the
// rows r ≥ m are not read.
type fewRowsFunc[E elem] func(m, n, k int, a0, a1, a2, a3, b *E, ldb int, c0, c1, c2, c3 *E, acc bool)

// MulRows sets (acc: adds to) c[r][:n] the product of the row a[r][:k]
// by the k×n matrix b, whose rows are ldb elements apart, for r < m,
// 1 ≤ m ≤ MaxRows. It runs on the calling goroutine and allocates
// nothing. It panics if a slice is too short: that is a bug in the
// caller, not a user's mistake.
func MulRows[T Float](m, n, k int, a *[MaxRows][]T, b []T, ldb int, c *[MaxRows][]T, acc bool) {
	if m < 1 || m > MaxRows {
		panic(fmt.Sprintf("gemm: MulRows of %d rows", m))
	}
	for r := range m {
		if err := (Product{M: 1, N: n, K: k, Lda: k, Ldb: ldb, Ldc: n}).check(len(a[r]), len(b), len(c[r])); err != nil {
			panic(err)
		}
	}
	var z T
	if unsafe.Sizeof(z) == 4 {
		mulRows(m, n, k, convRows[T, float32](a), conv[T, float32](b), ldb, convRows[T, float32](c), acc)
		return
	}
	mulRows(m, n, k, convRows[T, float64](a), conv[T, float64](b), ldb, convRows[T, float64](c), acc)
}

// convRows views each of the rows as []E.
func convRows[T Float, E elem](rows *[MaxRows][]T) (out [MaxRows][]E) {
	for r, x := range rows {
		out[r] = conv[T, E](x)
	}
	return out
}

// mulRows is MulRows on the kernels' element type.
func mulRows[E elem](m, n, k int, a [MaxRows][]E, b []E, ldb int, c [MaxRows][]E, acc bool) {
	if n == 0 {
		return
	}
	if k == 0 {
		if !acc {
			for r := range m {
				clear(c[r][:n])
			}
		}
		return
	}
	kr := kernelFor[E]()
	nv := n - n%kr.lanes
	if m > 1 && nv > 0 {
		var ap, cp [MaxRows]*E
		for r := range m {
			ap[r], cp[r] = &a[r][0], &c[r][0]
		}
		kr.fewRows(m, nv, k, ap[0], ap[1], ap[2], ap[3], &b[0], ldb, cp[0], cp[1], cp[2], cp[3], acc)
	} else {
		nv = 0
	}
	switch {
	case nv == n:
	case nv == 0:
		// The rows as Mul's matrix–vector product computes each alone.
		for r := range m {
			gemv(kr, Product{Acc: acc, M: 1, N: n, K: k, Lda: k, Ldb: ldb, Ldc: n}, a[r], b, c[r])
		}
	default:
		// The last columns as that product's axpyRows computes them.
		for r := range m {
			axpyRows(kr, acc, c[r][nv:n], k, b[nv:], ldb, a[r])
		}
	}
}

// fewRowsGo is the portable fewRowsFunc: the rows' sums in axpyGo's
// order, B's rows read once for all of them.
func fewRowsGo[E elem](m, n, k int, a0, a1, a2, a3, b *E, ldb int, c0, c1, c2, c3 *E, acc bool) {
	ap, cp := [MaxRows]*E{a0, a1, a2, a3}, [MaxRows]*E{c0, c1, c2, c3}
	var as, cs [MaxRows][]E
	for r := range m {
		as[r], cs[r] = unsafe.Slice(ap[r], k), unsafe.Slice(cp[r], n)
		if !acc {
			clear(cs[r])
		}
	}
	bs := unsafe.Slice(b, (k-1)*ldb+n)
	for l := range k {
		row := bs[l*ldb : l*ldb+n]
		for r := range m {
			axpyGo(n, as[r][l], &row[0], &cs[r][0])
		}
	}
}
