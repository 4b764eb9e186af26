package vm

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// dtypeMismatch says why a tensor of dtype got cannot stand for a value of
// dtype want, with what to do when one is an integer and the other a float:
// values are never converted behind the caller's back.
func dtypeMismatch(got, want tensor.Dtype) error {
	switch {
	case graph.IsInteger(want) && graph.IsFloat(got):
		return fmt.Errorf("got a %v tensor for %v values: convert it (graph.FromInt64s, say)", got, want)
	case graph.IsFloat(want) && graph.IsInteger(got):
		return fmt.Errorf("got an %v tensor for %v values: convert it (graph.FromFloat64s, say), or make the input %v and cast it in the graph with ops.Cast", got, want, got)
	}
	return fmt.Errorf("dtype %v, want %v", got, want)
}
