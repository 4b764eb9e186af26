package cuda

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The plan and kernel sources of the MLP training step (float32, Adam),
// and the plan of the Fashion-MNIST CNN's, are those in testdata: a
// change to code generation shows as a diff to review (go test ./cuda
// -run Golden -update rewrites them).
func TestGolden(t *testing.T) {
	prog, _ := mlpStep(t, graph.Float32, nn.NewAdam(nn.DefaultAdam()))
	pl, err := newPlan(prog)
	if err != nil {
		t.Fatal(err)
	}
	cnn, _ := cnnStep(t, graph.Float32, 64, 28, 32, 64, true)
	cnnPlan, err := newPlan(cnn)
	if err != nil {
		t.Fatal(err)
	}
	var f32 []kernelDef
	for k, d := range pl.kernels {
		if pl.f32[k] {
			f32 = append(f32, d)
		}
	}
	for file, got := range map[string]string{
		"mlp_step_plan.txt": pl.describe(prog),
		"mlp_step_f32.cu":   moduleSource(true, f32),
		"cnn_step_plan.txt": cnnPlan.describe(cnn),
	} {
		path := filepath.Join("testdata", file)
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./cuda -run Golden -update to write it)", err)
		}
		if string(want) != got {
			t.Errorf("%s differs from the generated text (review, then go test ./cuda -run Golden -update):\n%s", path, got)
		}
	}
}
