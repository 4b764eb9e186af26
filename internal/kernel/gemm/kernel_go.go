package gemm

import "unsafe"

// goKernels are portable: plain Go loops, a 4×4 register tile.
var goKernels = kernels{
	name: "go",
	f32:  kernel[float32]{micro: microGo[float32], microStrided: microStridedGo[float32], dot: dotGo[float32], axpy: axpyGo[float32], dots4: dots4Go[float32], axpy4: axpy4Go[float32], dotTile: dotTileGo[float32], fewRows: fewRowsGo[float32], lanes: 1, mr: 4, nr: 4, kc: 256, mc: 64, nc: 1024},
	f64:  kernel[float64]{micro: microGo[float64], microStrided: microStridedGo[float64], dot: dotGo[float64], axpy: axpyGo[float64], dots4: dots4Go[float64], axpy4: axpy4Go[float64], dotTile: dotTileGo[float64], fewRows: fewRowsGo[float64], lanes: 1, mr: 4, nr: 4, kc: 256, mc: 64, nc: 1024},
}

// microGo is the portable micro-kernel for a 4×4 tile of a packed panel.
func microGo[E elem](k int, a, b, c *E, ldc int, acc bool) {
	microStridedGo(k, a, b, 4, c, ldc, acc)
}

// microStridedGo is the portable micro-kernel for a 4×4 tile, B's rows
// ldb elements apart (4 in a packed panel). Sixteen named accumulators let
// the compiler keep the tile in registers.
func microStridedGo[E elem](k int, a, b *E, ldb int, c *E, ldc int, acc bool) {
	ap := unsafe.Slice(a, 4*k)
	bp := unsafe.Slice(b, max(k-1, 0)*ldb+4)
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 E
	for l := 0; l < k; l++ {
		av, bv := ap[4*l:4*l+4:4*l+4], bp[ldb*l:ldb*l+4:ldb*l+4]
		a0, a1, a2, a3 := av[0], av[1], av[2], av[3]
		b0, b1, b2, b3 := bv[0], bv[1], bv[2], bv[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	tile := [4][4]E{
		{c00, c01, c02, c03},
		{c10, c11, c12, c13},
		{c20, c21, c22, c23},
		{c30, c31, c32, c33},
	}
	cp := unsafe.Slice(c, 3*ldc+4)
	for i := range tile {
		row := cp[i*ldc : i*ldc+4 : i*ldc+4]
		if acc {
			for j := range row {
				row[j] += tile[i][j]
			}
		} else {
			copy(row, tile[i][:])
		}
	}
}

// dotGo is x·y with four partial sums.
func dotGo[E elem](n int, x, y *E) E {
	xs, ys := unsafe.Slice(x, n), unsafe.Slice(y, n)
	var s0, s1, s2, s3 E
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += xs[i] * ys[i]
		s1 += xs[i+1] * ys[i+1]
		s2 += xs[i+2] * ys[i+2]
		s3 += xs[i+3] * ys[i+3]
	}
	for ; i < n; i++ {
		s0 += xs[i] * ys[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpyGo is y += alpha·x.
func axpyGo[E elem](n int, alpha E, x, y *E) {
	xs, ys := unsafe.Slice(x, n), unsafe.Slice(y, n)
	for i, v := range xs {
		ys[i] += alpha * v
	}
}

// dots4Go is four dot products with x.
func dots4Go[E elem](n int, a *E, lda int, x, y *E, ldy int, acc bool) {
	as, ys := unsafe.Slice(a, 3*lda+n), unsafe.Slice(y, 3*ldy+1)
	for r := range 4 {
		set(&ys[r*ldy], dotGo(n, &as[r*lda], x), acc)
	}
}

// axpy4Go adds four scaled rows to y.
func axpy4Go[E elem](n int, x, a *E, lda int, y *E) {
	as, xs := unsafe.Slice(a, 3*lda+n), unsafe.Slice(x, 4)
	for r, v := range xs {
		axpyGo(n, v, &as[r*lda], y)
	}
}

// dotTileGo is the 3×4 tile of dot products.
func dotTileGo[E elem](k int, a *E, lda int, b *E, ldb int, c *E, ldc int, acc bool) {
	as, bs, cs := unsafe.Slice(a, 2*lda+k), unsafe.Slice(b, 3*ldb+k), unsafe.Slice(c, 2*ldc+4)
	for r := range 3 {
		for j := range 4 {
			set(&cs[r*ldc+j], dotGo(k, &as[r*lda], &bs[j*ldb]), acc)
		}
	}
}
