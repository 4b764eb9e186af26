package cuda

import (
	"os/exec"
	"strings"
	"testing"
)

// Available says clearly why no GPU can be used, or that one can; it is
// stable across calls and never panics.
func TestAvailable(t *testing.T) {
	err := Available()
	if err == nil {
		v, verr := DriverVersion()
		if verr != nil || v <= 0 {
			t.Fatalf("a GPU is available, but DriverVersion gives %d, %v", v, verr)
		}
		t.Logf("GPU available, driver version %d", v)
		return
	}
	if !strings.HasPrefix(err.Error(), "cuda: ") {
		t.Errorf("error %q does not say it comes from the cuda backend", err)
	}
	if Available() == nil || Available().Error() != err.Error() {
		t.Error("Available changed its answer")
	}
	if _, verr := DriverVersion(); verr == nil || verr.Error() != err.Error() {
		t.Errorf("DriverVersion: %v, want Available's error", verr)
	}
	t.Logf("no GPU: %v", err)
}

// Only this package and dist (MPI) may import purego: everything else,
// and every program that uses neither, builds into a static binary that
// needs no C library.
func TestOnlyCudaImportsPurego(t *testing.T) {
	loaders := map[string]bool{"github.com/nabla-go/nabla/cuda": true, "github.com/nabla-go/nabla/dist": true}
	pkgs, err := exec.Command("go", "list", "github.com/nabla-go/nabla/...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(pkgs)) {
		if loaders[p] {
			continue
		}
		deps, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", p).Output()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(deps), "github.com/ebitengine/purego") {
			t.Errorf("%s depends on purego", p)
		}
	}
}
