package main

import (
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/cuda"
	"github.com/nabla-go/nabla/graph"
)

// MulConstant's GPU kernel gives its Forward's values and gradients on a
// device (the GPU, else the host stand-in running the GPU's kernels), in
// both dtypes; an op without a kernel (Polynomial) runs on the host, and
// CheckOp says so.
func TestMulConstantOnDevice(t *testing.T) {
	dev, err := cuda.OpenOrHost()
	if err != nil {
		t.Skipf("no GPU and no host stand-in: %v", err)
	}
	defer dev.Close()
	for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
		x, _ := graph.FromFloat64s(dtype, []float64{1.5, -2, 0.25, 3, -0.5, 7}, 2, 3)
		onHost, err := cuda.CheckOp(dev, func(in []*graph.Node) *graph.Node { return MulConst(in[0], 0.1) }, x)
		if err != nil {
			t.Fatalf("%v: %v", dtype, err)
		}
		if slices.Contains(onHost, "MulConstant") {
			t.Errorf("%v: MulConstant ran on the host: %v", dtype, onHost)
		}
		onHost, err = cuda.CheckOp(dev, func(in []*graph.Node) *graph.Node { return Polynomial(in[0], 1, 2, 3) }, x)
		if err != nil {
			t.Fatalf("%v: %v", dtype, err)
		}
		if !slices.Contains(onHost, "Polynomial") {
			t.Errorf("%v: Polynomial has no GPU kernel but did not run on the host: %v", dtype, onHost)
		}
	}
}
