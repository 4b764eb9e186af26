//go:build !openblas

package ops

import (
	"unsafe"

	"github.com/nabla-go/nabla/graph"
)

// The default matrix-product kernel, in pure Go over gonum's BLAS level-1
// routines. Building with -tags openblas replaces it with OpenBLAS's gemm
// (linalg_openblas.go).

// Block sizes of the serial kernel: a depth block of B (gemmDepth rows of
// up to gemmCols) stays in L2 while gemmRows rows of C are updated.
const (
	gemmRows  = 64
	gemmCols  = 256
	gemmDepth = 128
)

// run computes C on the calling goroutine. gonum's own Dgemm starts
// goroutines and allocates on every call; splitting the product across
// long-lived workers here measured no faster on two shared cores, so the
// kernel stays serial and allocation-free.
func (p *gemm[T]) run(*graph.Exec) {
	if !p.acc {
		clear(p.c)
	}
	if p.m == 0 || p.n == 0 || p.k == 0 {
		return
	}
	p.block(0, p.m, 0, p.n)
}

// block computes rows [i0,i1) and columns [j0,j1) of C, already zeroed,
// block by block.
func (p *gemm[T]) block(i0, i1, j0, j1 int) {
	for ib := i0; ib < i1; ib += gemmRows {
		for jb := j0; jb < j1; jb += gemmCols {
			for lb := 0; lb < p.k; lb += gemmDepth {
				p.tile(ib, min(ib+gemmRows, i1), jb, min(jb+gemmCols, j1), lb, min(lb+gemmDepth, p.k))
			}
		}
	}
}

// tile adds the contribution of depths [l0,l1) to a tile of C: as dot
// products when A's rows and B's columns are both contiguous (B transposed,
// or a single column), otherwise as axpy updates of C's rows.
func (p *gemm[T]) tile(i0, i1, j0, j1, l0, l1 int) {
	lda, ldb := p.k, p.n
	if p.transA {
		lda = p.m
	}
	if p.transB {
		ldb = p.k
	}
	dots := !p.transA && (p.transB || p.n == 1)
	for i := i0; i < i1; i++ {
		ci := p.c[i*p.n+j0 : i*p.n+j1]
		if dots {
			ai := p.a[i*lda+l0 : i*lda+l1]
			for j := range ci {
				bj := p.b[(j0+j)*ldb+l0 : (j0+j)*ldb+l1] // for one column (ldb 1), b[l0:l1]
				ci[j] += blasDot(ai, bj)
			}
			continue
		}
		for l := l0; l < l1; l++ {
			var v T
			if p.transA {
				v = p.a[l*lda+i]
			} else {
				v = p.a[i*lda+l]
			}
			if p.transB {
				blasAxpy(len(ci), v, p.b[j0*ldb+l:], ldb, ci)
			} else {
				blasAxpy(len(ci), v, p.b[l*ldb+j0:], 1, ci)
			}
		}
	}
}

// blasDot is x·y through gonum's Sdot or Ddot.
func blasDot[T float](x, y []T) T {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return T(blasImpl.Sdot(len(x), asFloat32s(x), 1, asFloat32s(y), 1))
	}
	return T(blasImpl.Ddot(len(x), asFloat64s(x), 1, asFloat64s(y), 1))
}
