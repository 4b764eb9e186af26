package cuda

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/optable"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
)

// Every kernel module the GPU would compile for the op table's programs
// (each row's output and gradients, float64 and float32) and the training
// steps (the MLP's, by Adam and by Adam with float32 moments; the CNN's,
// with its split sums and convolutions as products) compiles with NVRTC
// for sm_90, the H100's architecture. NVRTC needs no GPU: where it
// loads (Debian's libnvrtc11.2, CUDA's toolkit), this checks that the
// sources are CUDA C++ NVRTC accepts, not only C that gcc does.
func TestNVRTCCompilesTheKernels(t *testing.T) {
	nv, err := loadNVRTC()
	if err != nil {
		t.Skipf("no NVRTC: %v", err)
	}
	arch := "sm_90"
	if archs := nv.supportedArchs(); len(archs) > 0 && archs[len(archs)-1] < 90 {
		arch = fmt.Sprintf("sm_%d", archs[len(archs)-1])
	}
	t.Logf("NVRTC %s at %s, compiling for %s", nv.version, nv.path, arch)
	var progs []*compile.Program
	for _, c := range optable.Table() {
		for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
			g := graph.New()
			var ins []*graph.Node
			for i, x := range c.Inputs {
				x = optable.Convert(x, dtype)
				ins = append(ins, g.Input(fmt.Sprintf("x%d", i), x.Dtype(), x.Shape()...))
			}
			y := c.Build(ins)
			if y.Err() != nil {
				continue
			}
			outs := []*graph.Node{y}
			if graph.IsFloat(y.DType()) {
				if grads, err := compile.GradWith(sumOf(y), floatInputs(ins), compile.ZerosIfDisconnected()); err == nil {
					outs = append(outs, grads...)
				}
			}
			if p, err := compile.Compile(outs); err == nil {
				progs = append(progs, p)
			}
		}
	}
	for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
		p, _ := mlpStep(t, dtype, nn.NewAdam(nn.DefaultAdam()))
		// The CNN's step: split sums and convolutions as products.
		cnn, _ := cnnStep(t, dtype, 64, 28, 32, 64, true)
		progs = append(progs, p, cnn)
	}
	// Adam's step with float32 moments (ops.AdamM32), in each form.
	for _, o := range float32MomentOptimizers() {
		p, _ := mlpStep(t, graph.Float64, o.opt())
		progs = append(progs, p)
	}
	// Every distinct kernel once, in one module per float type (kernels
	// renamed apart), so that NVRTC's cost per compilation is paid twice
	// rather than once per program.
	seen := map[string]bool{}
	defs := map[bool][]kernelDef{}
	for _, p := range progs {
		pl, err := newPlan(p)
		if err != nil {
			t.Fatal(err)
		}
		for k, d := range pl.kernels {
			key := fmt.Sprint(pl.f32[k], d.params, d.helpers, d.body)
			if seen[key] {
				continue
			}
			seen[key] = true
			f32 := pl.f32[k]
			d.name = fmt.Sprintf("k%d", len(defs[f32]))
			defs[f32] = append(defs[f32], d)
		}
	}
	var sources []string
	for _, f32 := range []bool{false, true} {
		sources = append(sources, moduleSource(f32, defs[f32]))
	}
	if n := len(defs[false]) + len(defs[true]); n < 100 {
		t.Fatalf("only %d kernels to compile", n)
	}
	adamM32 := 0
	for _, d := range defs[false] {
		if strings.Contains(d.body, "nb_adam_fsqrt") {
			adamM32++
		}
	}
	if adamM32 < 3 { // without a decay, with L2 decay, with AdamW's
		t.Fatalf("%d kernels of AdamM32, want 3 forms or more", adamM32)
	}
	// NVRTC compiles programs on several threads at once.
	errs := make([]error, len(sources))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				_, errs[i] = nv.compile(sources[i], compileOptions(arch), true)
			}
		})
	}
	for i := range sources {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d float64 and %d float32 kernels compiled", len(defs[false]), len(defs[true]))
}

// sumOf is the sum of y's elements.
func sumOf(y *graph.Node) *graph.Node { return ops.Sum(y) }

// floatInputs are the nodes of a float dtype.
func floatInputs(nodes []*graph.Node) []*graph.Node {
	var out []*graph.Node
	for _, n := range nodes {
		if graph.IsFloat(n.DType()) {
			out = append(out, n)
		}
	}
	return out
}
