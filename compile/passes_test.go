package compile

import (
	"slices"
	"testing"
)

// TestPassOrder checks the pass table against the ordering constraints.
func TestPassOrder(t *testing.T) {
	index := func(name string) int {
		return slices.IndexFunc(passes[:], func(p pass) bool { return p.name == name })
	}
	for _, c := range passOrder {
		i, j := index(c.a), index(c.b)
		switch {
		case i < 0 || j < 0:
			t.Errorf("case %v: a pass is not in the table", c)
		case i >= j:
			t.Errorf("case %v: got %s at %d and %s at %d, want %s first", c, c.a, i, c.b, j, c.a)
		}
	}
}
