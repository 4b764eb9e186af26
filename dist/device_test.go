package dist

import (
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/cuda"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/fdtest"
)

// checkOnDevice runs collectives, and their gradients, in a program on a
// device, the GPU backend's host stand-in (a GPU where there is one), and
// compares them with the CPU: the backend runs them on the host, copying
// their inputs and outputs, so they work on a GPU machine before they have
// device kernels (NCCL).
func checkOnDevice(t *testing.T, c *Comm) {
	dev, err := cuda.OpenOrHost()
	if err != nil {
		t.Skipf("no device, not even the host stand-in: %v", err)
	}
	defer dev.Close()
	x := fdtest.TensorOf(t, graph.TypeOf(tensor.Float64, 2*c.Size(), 3), fdtest.RandomValues(uint64(c.Rank())+3, 6*c.Size())...)
	for _, f := range []struct {
		name string
		f    func(in []*graph.Node) *graph.Node
	}{
		{"AllReduce", func(in []*graph.Node) *graph.Node { return AllReduce(c, in[0], Sum) }},
		{"AllGather", func(in []*graph.Node) *graph.Node { return AllGather(c, in[0]) }},
	} {
		onHost, err := cuda.CheckOp(dev, f.f, x)
		require.NoError(t, err, "%v: %s", c, f.name)
		require.Contains(t, onHost, f.name, "%v: %s ran on the host", c, f.name)
		t.Logf("%v: %s on %v: matches the CPU; on the host: %v", c, f.name, dev, onHost)
	}
}

// TestOnDeviceSingleProcess runs checkOnDevice in one process.
func TestOnDeviceSingleProcess(t *testing.T) { checkOnDevice(t, single()) }
