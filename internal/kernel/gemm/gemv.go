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
			dotRows(k, p.Acc, c, p.Ldc, p.M, p.K, a, p.Lda, b)
			return true
		}
		axpyRows(k, p.Acc, c[:p.M], p.K, a, p.Lda, b)
		return true
	case p.M == 1 && (!p.TransA || p.K == 1 || p.Lda == 1):
		// c[j] = Σ_l a[l]·B(l,j), a contiguous.
		if p.TransB {
			dotRows(k, p.Acc, c, 1, p.N, p.K, b, p.Ldb, a)
			return true
		}
		axpyRows(k, p.Acc, c[:p.N], p.K, b, p.Ldb, a)
		return true
	}
	return false
}

// dotRows sets (or, with acc, adds to) c[i·ldc] the dot product of row i
// of m (rows ldm apart, n long) with x, for i < rows: four rows at a time,
// sharing the loads of x.
func dotRows[E elem](k *kernel[E], acc bool, c []E, ldc, rows, n int, m []E, ldm int, x []E) {
	nv := n - n%k.lanes
	i := 0
	for ; i+4 <= rows; i += 4 {
		if nv > 0 {
			k.dots4(nv, &m[i*ldm], ldm, &x[0], &c[i*ldc], ldc, acc)
		}
		if nv == n {
			continue // no tail
		}
		for r := range 4 {
			if nv == 0 {
				set(&c[(i+r)*ldc], 0, acc)
			}
			var v E
			row := m[(i+r)*ldm : (i+r)*ldm+n]
			for l := nv; l < n; l++ {
				v += row[l] * x[l]
			}
			c[(i+r)*ldc] += v
		}
	}
	for ; i < rows; i++ {
		set(&c[i*ldc], k.dot(n, &m[i*ldm], &x[0]), acc)
	}
}

// set stores v in *c, or adds it when acc.
func set[E elem](c *E, v E, acc bool) {
	if acc {
		v += *c
	}
	*c = v
}

// axpyRows sets (or, with acc, adds to) y the sum over l < rows of
// x[l]·m[l·ldm : l·ldm+len(y)]: four rows at a time, so y is loaded and
// stored once per four.
func axpyRows[E elem](k *kernel[E], acc bool, y []E, rows int, m []E, ldm int, x []E) {
	if !acc {
		clear(y)
	}
	n := len(y)
	nv := n - n%k.lanes
	l := 0
	for ; l+4 <= rows; l += 4 {
		if nv > 0 {
			k.axpy4(nv, &x[l], &m[l*ldm], ldm, &y[0])
		}
		if nv == n {
			continue // no tail
		}
		for r := range 4 {
			v, row := x[l+r], m[(l+r)*ldm:(l+r)*ldm+n]
			for j := nv; j < n; j++ {
				y[j] += v * row[j]
			}
		}
	}
	for ; l < rows; l++ {
		k.axpy(n, x[l], &m[l*ldm], &y[0])
	}
}
