package compile_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// TestGradientOfSlicesJoinsPieces: the gradient of a function of
// disjoint slices of x (an LSTM's gates, say) concatenates the slices'
// gradients, with zeros in the gaps, instead of adding their padded
// copies; overlapping slices still add. Three orders of derivatives match
// finite differences either way.
func TestGradientOfSlicesJoinsPieces(t *testing.T) {
	x0 := []float64{0.3, -1.2, 0.8, 2.1, -0.4, 0.05, 1.1, -0.7, 0.6, 0.2, -1.5, 0.9, 0.4, -0.3}
	for _, tc := range []struct {
		name   string
		ranges [][2]int
		joined bool
	}{
		{"adjacent", [][2]int{{0, 2}, {2, 5}, {5, 7}}, true},
		{"gaps", [][2]int{{5, 6}, {0, 2}, {3, 5}}, true},
		{"overlapping", [][2]int{{0, 3}, {2, 5}}, false},
	} {
		build := func(x *graph.Node) *graph.Node {
			var y *graph.Node
			for k, r := range tc.ranges {
				s := ops.Slice(x, 1, r[0], r[1])
				var term *graph.Node
				switch k % 3 {
				case 0:
					term = ops.Sin(s)
				case 1:
					term = ops.Mul(s, s)
				default:
					term = ops.Tanh(s)
				}
				if y == nil {
					y = ops.Sum(term)
				} else {
					y = ops.Add(y, ops.Sum(term))
				}
			}
			return y
		}
		checkOrders(t, tc.name, []int{2, 7}, x0, build)

		x := graph.New().Input("x", graph.Float64, 2, 7)
		grads, err := compile.Grad(build(x), x)
		require.NoError(t, err)
		concats, paddedSums := 0, 0
		seen := map[*graph.Node]bool{}
		var walk func(n *graph.Node)
		walk = func(n *graph.Node) {
			if seen[n] {
				return
			}
			seen[n] = true
			concats += btoi(n.OpName() == "Concat")
			for _, in := range n.Inputs() {
				paddedSums += btoi(n.OpName() == "Add" && in.OpName() == "Pad")
				walk(in)
			}
		}
		walk(grads[0])
		if tc.joined {
			require.Equal(t, 1, concats, tc.name)
			require.Zero(t, paddedSums, "%s: the pieces' gradients are padded and added", tc.name)
		} else {
			require.Zero(t, concats, tc.name)
			require.NotZero(t, paddedSums, tc.name)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
