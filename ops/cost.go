package ops

import "github.com/nabla-go/nabla/graph"

// elementwiseCost counts one flop per output element, for ops that compute
// each element from one element of each input.
func elementwiseCost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	c.Flops = int64(out.Size())
	return c
}

// reductionCost counts one flop per element of the input reduced.
func reductionCost(in []graph.Type, out graph.Type) graph.Cost {
	c := graph.DefaultCost(in, out)
	c.Flops = int64(in[0].Size())
	return c
}
