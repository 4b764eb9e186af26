package gemm

// gemv computes p when it is a matrix–vector product whose vectors are
// contiguous, reading the matrix once as stored, and reports whether it
// did. A row of C (m = 1) or a column (n = 1) is a set of dot products
// when the matrix's rows run along the depth, and a sum of scaled rows
// (axpy) when they run across it.
func gemv[E elem](k *kernel[E], p Product, a, b, c []E) bool {
	switch {
	case p.N == 1 && (p.M == 1 || p.Ldc == 1) && (p.TransB || p.K == 1 || p.Ldb == 1):
		// c[i] = Σ_l A(i,l)·b[l], b contiguous.
		if !p.TransA {
			for i := range p.M {
				dotInto(k, p.Acc, &c[i*p.Ldc], p.K, &a[i*p.Lda], &b[0])
			}
			return true
		}
		axpyRows(k, p.Acc, c[:p.M], p.K, a, p.Lda, b, 1)
		return true
	case p.M == 1 && (!p.TransA || p.K == 1 || p.Lda == 1):
		// c[j] = Σ_l a[l]·B(l,j), a contiguous.
		if p.TransB {
			for j := range p.N {
				dotInto(k, p.Acc, &c[j], p.K, &b[j*p.Ldb], &a[0])
			}
			return true
		}
		axpyRows(k, p.Acc, c[:p.N], p.K, b, p.Ldb, a, 1)
		return true
	}
	return false
}

func dotInto[E elem](k *kernel[E], acc bool, c *E, n int, x, y *E) {
	v := k.dot(n, x, y)
	if acc {
		v += *c
	}
	*c = v
}

// axpyRows sets (or, with acc, adds to) y the sum over l < rows of
// x[l·incX]·M[l·ldm : l·ldm+len(y)].
func axpyRows[E elem](k *kernel[E], acc bool, y []E, rows int, m []E, ldm int, x []E, incX int) {
	if !acc {
		clear(y)
	}
	for l := range rows {
		k.axpy(len(y), x[l*incX], &m[l*ldm], &y[0])
	}
}
