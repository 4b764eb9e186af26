package kernel

import (
	"go/build"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/nabla-go/nabla"

// moduleRoot is the folder of go.mod, from the go command.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Skipf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// TestKernelsKnowNoIR walks the imports (tests' own left out) of every
// package under internal/kernel: none may lead to a package of nabla
// outside internal/kernel, so the kernels stay below the IR.
func TestKernelsKnowNoIR(t *testing.T) {
	root := moduleRoot(t)
	matches, err := filepath.Glob(filepath.Join(root, "internal", "kernel", "*"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(path, from string)
	walk = func(path, from string) {
		if seen[path] || !strings.HasPrefix(path, module+"/") {
			return
		}
		seen[path] = true
		if !strings.HasPrefix(path, module+"/internal/kernel") {
			t.Errorf("%s imports %s, which is above the kernels", from, path)
			return
		}
		pkg, err := build.Import(path, root, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return
			}
			t.Fatalf("%s: %v", path, err)
		}
		for _, imp := range pkg.Imports {
			walk(imp, path)
		}
	}
	n := 0
	for _, dir := range matches {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := build.ImportDir(dir, 0); err == nil {
			walk(module+"/"+filepath.ToSlash(rel), "")
			n++
		}
	}
	if n < 5 {
		t.Fatalf("found %d kernel packages under %s, want at least 5", n, root)
	}
}

// TestTestKitsOnlyInTests checks that no package's own (non-test) files
// import a test kit of internal/testkit: they serve tests alone.
func TestTestKitsOnlyInTests(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], module+"/internal/testkit") {
			continue
		}
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module+"/internal/testkit") {
				t.Errorf("%s imports the test kit %s outside its tests", fields[0], imp)
			}
		}
	}
}
