package graph_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
)

// TestDefaultCost: an op that is not a Coster reads its inputs and writes
// its output once, with no flops: two float32 (2,3) inputs are 2·6·4 bytes
// read, the output 6·4 bytes written.
func TestDefaultCost(t *testing.T) {
	x := graph.TypeOf(graph.Float32, 2, 3)
	require.Equal(t, graph.Cost{BytesRead: 48, BytesWritten: 24}, graph.CostOf(addOp{}, []graph.Type{x, x}, x))
	// Several outputs add up; a float64 scalar is 8 bytes.
	s := graph.TypeOf(graph.Float64)
	require.Equal(t, graph.Cost{BytesRead: 24, BytesWritten: 32}, graph.DefaultCost([]graph.Type{x}, s, x))
	// A Coster that panics gets the default.
	require.Equal(t, graph.Cost{BytesRead: 48, BytesWritten: 24}, graph.CostOf(panickyCoster{}, []graph.Type{x, x}, x))
}

// panickyCoster is addOp with a Cost that panics.
type panickyCoster struct{ addOp }

func (panickyCoster) Cost([]graph.Type, graph.Type) graph.Cost { panic("no estimate") }
