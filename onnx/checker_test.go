package onnx_test

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/ops"
)

// exportedModels writes the test nets, and the MLP's loss with its
// gradients, to dir and returns their paths.
func exportedModels(t *testing.T, dir string) []string {
	var paths []string
	for name, build := range nets {
		g := graph.New()
		_, y := build(g, rand.New(rand.NewPCG(5, 6)), graph.Float64)
		path := filepath.Join(dir, name+".onnx")
		if err := onnx.WriteFile(path, []*graph.Node{y}, onnx.ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// TestGradientProgramExports exports an MLP's loss with its gradients and
// its Hessian with respect to the input, and compares the imported graph's
// values with the original's.
func TestGradientProgramExports(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	g := graph.New()
	x, y := mlp(g, r, graph.Float64)
	loss := ops.Mean(ops.Square(y))
	params := paramsOf(g)
	grads, err := compile.Grad(loss, params...)
	if err != nil {
		t.Fatal(err)
	}
	outs := append([]*graph.Node{loss}, grads...)
	hessian, err := compile.Hessian(loss, x) // forward over reverse: JVP ops on the gradient
	if err != nil {
		t.Fatal(err)
	}
	outs = append(outs, hessian)
	checkReimport(t, "", x, randDense(r, x.Shape()...), outs, 0, 1e-12)
}

// TestExportPassesONNXChecker validates exported files with ONNX's own
// checker (Debian's python3-onnx).
func TestExportPassesONNXChecker(t *testing.T) {
	python := pythonWithONNX()
	if python == "" {
		t.Skip("python3-onnx is not installed")
	}
	for _, path := range exportedModels(t, t.TempDir()) {
		out, err := exec.Command(python, "-c", "import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)", path).CombinedOutput()
		if err != nil {
			t.Errorf("%s: onnx.checker: %v\n%s", filepath.Base(path), err, out)
		}
	}
}

// TestConvGradientsExport exports the gradients of convolutions (strided,
// dilated, grouped, padded) and average pooling, whose gradient ops
// export as ONNX convolutions, and compares the imported values.
func TestConvGradientsExport(t *testing.T) {
	for _, o := range []ops.ConvOptions{
		{Padding: []int{1}},
		{Stride: []int{2}, Padding: []int{1, 0, 2, 1}, Dilation: []int{1, 2}},
		{Groups: 2, Same: true},
	} {
		r := rand.New(rand.NewPCG(13, 14))
		g := graph.New()
		x := g.Input("x", graph.Float64, 2, 4, 7, 6)
		w := g.Param("w", randDense(r, 6, 4/max(o.Groups, 1), 3, 3))
		h := ops.Tanh(ops.Conv2D(x, w, o))
		h = ops.AvgPool2D(h, ops.PoolOptions{Kernel: []int{2}, Stride: []int{1, 2}, Padding: []int{1}})
		loss := ops.Sum(ops.Square(h))
		grads, err := compile.Grad(loss, x, w)
		if err != nil {
			t.Fatal(err)
		}
		outs := append([]*graph.Node{loss}, grads...)
		checkReimport(t, fmt.Sprintf("%+v: ", o), x, randDense(r, x.Shape()...), outs, 1e-12, 1e-12)
	}
}

// pythonWithONNX returns a python3 that imports onnx (Debian's
// python3-onnx), or "".
func pythonWithONNX() string {
	for _, p := range []string{"python3", "/usr/bin/python3"} { // a virtual environment may hide Debian's modules
		if exec.Command(p, "-c", "import onnx").Run() == nil {
			return p
		}
	}
	return ""
}

// TestMaxPoolGradientsExport exports max pooling's gradient (and, through
// a gradient of the gradient, its gather) for strided, overlapping,
// padded, dilated and ceil-mode windows, and compares the values after
// importing them back.
func TestMaxPoolGradientsExport(t *testing.T) {
	for _, o := range []ops.PoolOptions{
		{Kernel: []int{2}},
		{Kernel: []int{3}, Stride: []int{2}, Padding: []int{1}},
		{Kernel: []int{2, 3}, Stride: []int{1, 2}, Dilation: []int{2, 1}},
		{Kernel: []int{3}, Stride: []int{2}, CeilMode: true},
	} {
		r := rand.New(rand.NewPCG(81, 82))
		g := graph.New()
		x := g.Input("x", graph.Float64, 2, 3, 7, 6)
		y := ops.MaxPool2D(ops.Tanh(x), o)
		loss := ops.Sum(ops.Mul(ops.Square(y), g.Const(randDense(r, y.Shape()...))))
		grad, err := compile.Grad(loss, x)
		if err != nil {
			t.Fatal(err)
		}
		// A gradient of the gradient reads through MaxPool2DGather.
		second, err := compile.Grad(ops.Sum(ops.Mul(grad[0], g.Const(randDense(r, x.Shape()...)))), x)
		if err != nil {
			t.Fatal(err)
		}
		outs := []*graph.Node{loss, grad[0], second[0]}
		checkReimport(t, fmt.Sprintf("%+v: ", o), x, randDense(r, x.Shape()...), outs, 1e-12, 1e-12)
	}
}
