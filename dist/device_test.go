package dist

import (
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/cuda"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/fdtest"
)

// checkOnDevice runs collectives, and their gradients, in a program on a
// device and compares them with the CPU: a GPU (where there is one) for
// a Comm of one rank, whose collectives are device copies; the GPU
// backend's host stand-in for more ranks, where they run on the host
// (their inputs copied down, MPI on host memory, outputs up) unless
// $NABLA_NCCL names an NCCL (TestNCCLUnderOpenMPI's children).
func checkOnDevice(t *testing.T, c *Comm) {
	open := cuda.OpenOrHost
	if c.Size() > 1 {
		open = cuda.OpenHost // the ranks share this machine, not its GPU
	}
	dev, err := open()
	if err != nil {
		t.Skipf("no device, not even the host stand-in: %v", err)
	}
	defer dev.Close()
	wantHost := c.Size() > 1 && os.Getenv(ncclEnv) == ""
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
		require.Equal(t, wantHost, slices.Contains(onHost, f.name), "%v: %s on the host: %v", c, f.name, onHost)
		t.Logf("%v: %s on %v: matches the CPU; on the host: %v", c, f.name, dev, onHost)
	}
}

// TestOnDeviceSingleProcess runs checkOnDevice in one process.
func TestOnDeviceSingleProcess(t *testing.T) { checkOnDevice(t, single()) }
