package cuda

import (
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// TestFactorisationErrorsOnDevice: the factorisations have no GPU kernel
// and run on the host between device instructions; a matrix that is not
// positive-definite fails a device machine's Run as it fails the CPU's,
// naming the op, the batch element, the minor and the caller.
func TestFactorisationErrorsOnDevice(t *testing.T) {
	for _, dev := range testDevices(t) {
		g := graph.New()
		x := g.Input("x", graph.Float64, 2, 2, 2)
		// Tril and the product run on the device, Cholesky on the host.
		l := ops.Cholesky(ops.Add(ops.Tril(x, 0), ops.Triu(x, 1)))
		prog, err := compile.Compile([]*graph.Node{ops.LogDet(ops.MatMulT(l, l, false, true))})
		if err != nil {
			t.Fatal(err)
		}
		m, err := vm.New(prog, vm.OnDevice(dev))
		if err != nil {
			t.Fatal(err)
		}
		bad, _ := graph.FromFloat64s(graph.Float64, []float64{4, 2, 2, 5, 1, 2, 2, 1}, 2, 2, 2)
		err = m.Run(vm.Feeds{x: bad})
		m.Close()
		want := "batch element 1: the factorization could not be completed because the input is not positive-definite " +
			"(the leading minor of order 2 is not positive-definite) (built at linalg_test.go:22)"
		if err == nil || !strings.HasPrefix(err.Error(), "nabla: Cholesky (node Cholesky #") || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%v: got error %v, want Cholesky's, containing %q", dev, err, want)
		}
	}
}
