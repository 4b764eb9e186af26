package gemm

import (
	"fmt"
	"unsafe"
)

// elem is the element types the kernels compute in.
type elem interface{ float32 | float64 }

// kernel is one implementation of the inner loops for one element type.
type kernel[E elem] struct {
	// micro computes C (+)= A·B for an mr×nr tile of C with ldc elements
	// between rows: A a packed panel (k columns of mr values), B a packed
	// panel (k rows of nr values). acc false overwrites C.
	micro func(k int, a, b, c *E, ldc int, acc bool)
	// microStrided is micro reading B where it is stored, rows ldb
	// elements apart, instead of from a packed panel.
	microStrided func(k int, a, b *E, ldb int, c *E, ldc int, acc bool)
	// microDirect, where a set has it, is microStrided reading A where
	// it is stored too, rows lda elements apart: products that read B in
	// place then pack no full panel of A either.
	microDirect func(k int, a *E, lda int, b *E, ldb int, c *E, ldc int, acc bool)
	// microDirectT, where a set has it, is microDirect for a transposed
	// A, stored k×m: depth l's values at a[l·lda:].
	microDirectT func(k int, a *E, lda int, b *E, ldb int, c *E, ldc int, acc bool)
	// dot returns x[:n]·y[:n].
	dot func(n int, x, y *E) E
	// axpy adds alpha·x[:n] to y[:n].
	axpy func(n int, alpha E, x, y *E)
	// dots4 sets (acc: adds to) y[r·ldy] row r of a (rows lda apart)
	// times x, for r < 4, over n elements, a multiple of lanes.
	dots4 func(n int, a *E, lda int, x, y *E, ldy int, acc bool)
	// axpy4 adds x[r]·(row r of a) to y[:n] for r < 4, n a multiple of
	// lanes.
	axpy4 func(n int, x, a *E, lda int, y *E)
	// dotTile sets (acc: adds to) the 3×4 tile C[r·ldc+j] of dot products
	// of rows r of a with rows j of b over k elements, a multiple of
	// lanes.
	dotTile func(k int, a *E, lda int, b *E, ldb int, c *E, ldc int, acc bool)
	// fewRows computes products of 2 to MaxRows rows by one matrix (see
	// fewRowsFunc).
	fewRows fewRowsFunc[E]
	lanes   int
	mr, nr  int
	// Block sizes of the driver: kc depths, mc rows of A, nc columns of B
	// per packed block; mc is a multiple of mr and nc of nr.
	kc, mc, nc int
}

// Kernels is a matched pair of kernels, float32 and float64, that a CPU
// can run.
type kernels struct {
	name string
	f32  kernel[float32]
	f64  kernel[float64]
	// narrow, where a set has it, is a set of narrower tiles whose
	// micro-kernels compute every element of C with the same operations
	// (the same sums over the same depth blocks): products with at most
	// its nr columns and B not transposed run on it rather than on tiles
	// that would be mostly padding.
	narrow *kernels
}

// available lists the kernels this CPU can run, best first; the portable
// Go kernels come last. Platform files prepend to it in init.
var available = []*kernels{&goKernels}

// active is the kernel set in use.
var active = available[0]

// Kernels names the kernel sets this CPU can run, the one in use first.
func Kernels() []string {
	names := []string{active.name}
	for _, k := range available {
		if k != active {
			names = append(names, k.name)
		}
	}
	return names
}

// Use switches every product to the named kernel set (one of Kernels) and
// returns the name of the one it replaces. It is meant for tests and
// benchmarks, and must not be called while products run.
func Use(name string) (previous string, err error) {
	for _, k := range available {
		if k.name == name {
			previous, active = active.name, k
			return previous, nil
		}
	}
	return active.name, fmt.Errorf("gemm: no kernel %q on this CPU (have %v)", name, Kernels())
}

// kernelFor returns the active kernel for E.
func kernelFor[E elem]() *kernel[E] { return kernelOf[E](active) }

// kernelOf returns ks's kernel for E.
func kernelOf[E elem](ks *kernels) *kernel[E] {
	var z E
	if unsafe.Sizeof(z) == 4 {
		return any(&ks.f32).(*kernel[E])
	}
	return any(&ks.f64).(*kernel[E])
}

// tilesFor returns the kernel whose micro-kernels compute p: the active
// one, or its narrow set's when p has at most that set's nr columns and B
// is not transposed (see kernels.narrow).
func tilesFor[E elem](p Product) *kernel[E] {
	k := kernelFor[E]()
	if n := active.narrow; n != nil && !p.TransB && p.N <= kernelOf[E](n).nr && p.N < k.nr {
		return kernelOf[E](n)
	}
	return k
}
