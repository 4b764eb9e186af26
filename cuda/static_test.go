package cuda

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// A program built without cgo and without the cuda and dist packages (the
// MLP example's default build) is a static binary that needs no C
// library; built with -tags gpu or -tags mpi, it loads one (the check can
// fail).
func TestCoreBinariesAreStatic(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ELF binaries on Linux only")
	}
	if testing.Short() {
		t.Skip("builds the example three times")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build with (a test binary carried to another machine)")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		tags    string
		dynamic bool
	}{{"", false}, {"gpu", true}, {"mpi", true}} {
		bin := filepath.Join(dir, "mlp"+c.tags)
		cmd := exec.Command("go", "build", "-tags", c.tags, "-o", bin, "github.com/nabla-go/nabla/examples/mlp")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build -tags %q: %v\n%s", c.tags, err, out)
		}
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		interp := false
		for _, p := range f.Progs {
			interp = interp || p.Type == elf.PT_INTERP
		}
		libs, _ := f.ImportedLibraries()
		f.Close()
		if dynamic := interp || len(libs) > 0; dynamic != c.dynamic {
			t.Errorf("-tags %q: dynamic %v (interpreter %v, libraries %v), want %v", c.tags, dynamic, interp, libs, c.dynamic)
		}
	}
}
