package data

import (
	"fmt"
	"math"
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// The checks of sizes against graph.MemoryLimit (see the package doc),
// with products computed so that they cannot overflow.

// product64 multiplies factors (sizes, counts, bytes per element),
// reporting false, without overflowing, when a factor is negative or the
// product passes math.MaxInt64.
func product64(factors ...int) (int64, bool) {
	if slices.ContainsFunc(factors, func(n int) bool { return n < 0 }) {
		return 0, false
	}
	if slices.Contains(factors, 0) {
		return 0, true
	}
	p := int64(1)
	for _, n := range factors {
		if int64(n) > math.MaxInt64/p {
			return 0, false
		}
		p *= int64(n)
	}
	return p, true
}

// memoryError is nil when bytes (ok false: past an int64) fit
// graph.MemoryLimit, else the error for what, worded as graph's.
func memoryError(what string, bytes int64, ok bool) error {
	limit := graph.MemoryLimit()
	switch {
	case !ok:
		return fmt.Errorf("%s needs more bytes than an int64 counts, over the memory limit of %s (graph.SetMemoryLimit)", what, graph.FormatBytes(limit))
	case bytes > limit:
		return fmt.Errorf("%s needs %s, over the memory limit of %s (graph.SetMemoryLimit)", what, graph.FormatBytes(bytes), graph.FormatBytes(limit))
	}
	return nil
}

// checkBytes is memoryError for the product of factors.
func checkBytes(what string, factors ...int) error {
	b, ok := product64(factors...)
	return memoryError(what, b, ok)
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
	if err := checkBytes(fmt.Sprintf("shape %v of %d-byte elements", dims, elem), append([]int{elem}, dims...)...); err != nil {
		return 0, err
	}
	n, _ := product64(dims...)
	return int(n), nil
}
