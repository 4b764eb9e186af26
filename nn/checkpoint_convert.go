package nn

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// convertLoaded returns t, read from a file that holds it as fileDType,
// converted to want when Load converts it (see Load), or nil and, when a
// value stopped the conversion, why.
func convertLoaded(t *tensor.Dense, fileDType string, want graph.Type) (*tensor.Dense, string) {
	if !slices.Equal([]int(t.Shape()), want.Shape) || !graph.IsFloat(want.DType) {
		return nil, ""
	}
	switch fileDType {
	case "F16", "BF16", "I32", "I64":
	default:
		return nil, ""
	}
	out := graph.NewDenseOf(want)
	ints := graph.IsInteger(t.Dtype())
	var exact []int64
	if ints {
		exact = graph.Int64s(t)
	}
	for i := range want.Size() {
		graph.SetFloat(out, i, graph.Float(t, i))
		// A float64 holds every half value and int32; check the rest by
		// converting back.
		if ints && !fitsFloat(graph.Float(out, i), exact[i]) {
			return nil, fmt.Sprintf("value %d at index %d has no exact %v", exact[i], i, want.DType)
		}
	}
	return out, ""
}

// fitsFloat reports whether f, a float converted from v, is v exactly.
func fitsFloat(f float64, v int64) bool {
	// 2⁶³ is the only float that rounds from an int64 and converts back
	// out of range; it is never exact.
	return f < 1<<63 && int64(f) == v
}
