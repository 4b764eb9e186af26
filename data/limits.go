package data

import (
	"fmt"
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// The checks of sizes against graph.MemoryLimit (see the package doc):
// products computed so that they cannot overflow.

// productUpTo multiplies factors (sizes, counts, bytes per element),
// reporting false, without overflowing, when the product passes limit or
// a factor is negative.
func productUpTo(limit int64, factors ...int) (int64, bool) {
	if slices.ContainsFunc(factors, func(n int) bool { return n < 0 }) {
		return 0, false
	}
	if slices.Contains(factors, 0) {
		return 0, true
	}
	p := int64(1)
	for _, n := range factors {
		if int64(n) > limit/p {
			return 0, false
		}
		p *= int64(n)
	}
	return p, true
}

// overLimit is the error for what, needing more than limit bytes.
func overLimit(what string, limit int64) error {
	return fmt.Errorf("%s would pass the memory limit of %s (graph.SetMemoryLimit)", what, graph.FormatBytes(limit))
}

// sizeOf is the number of elements of shape dims, erroring if a
// dimension is negative or the elements, of elem bytes each, would pass
// graph.MemoryLimit.
func sizeOf(dims []int, elem int) (int, error) {
	for i, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("dimension %d is negative (%d)", i, d)
		}
	}
	limit := graph.MemoryLimit()
	b, ok := productUpTo(limit, append([]int{elem}, dims...)...)
	if !ok {
		return 0, overLimit(fmt.Sprintf("shape %v of %d-byte elements", dims, elem), limit)
	}
	return int(b) / elem, nil
}

// fitsIn reports whether the product of factors is at most limit.
func fitsIn(limit int64, factors ...int) bool {
	_, ok := productUpTo(limit, factors...)
	return ok
}
