//go:build !plot

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Without -tags plot, -plot is refused before any training, with the
// command that builds it in, and no file is written.
func TestPlotNeedsTag(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Plot = filepath.Join(t.TempDir(), "loss.png")
	var out bytes.Buffer
	_, err := Train(cfg, &out)
	require.EqualError(t, err, "mlp: -plot: this build has no plotting (it keeps gonum.org/v1/plot out of the default build): run it with go run -tags plot ./examples/mlp -plot loss.png")
	require.Empty(t, out.String(), "nothing trained")
	_, err = os.Stat(cfg.Plot)
	require.True(t, os.IsNotExist(err), "no file written: %v", err)
}

// go run ./examples/mlp compiles none of the plotting modules: gonum/plot,
// its fonts, LaTeX renderer, image and PDF libraries made up a third of
// the packages of a first run's build.
func TestDefaultBuildLeavesOutPlotting(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH:", err)
	}
	deps, err := exec.Command(goTool, "list", "-deps", ".").Output()
	require.NoError(t, err)
	for _, pkg := range strings.Fields(string(deps)) {
		for _, heavy := range []string{"gonum.org/v1/plot", "github.com/go-fonts/", "github.com/go-latex/", "golang.org/x/image/", "github.com/go-pdf/", "git.sr.ht/~sbinet/gg"} {
			require.False(t, strings.HasPrefix(pkg, heavy), "the default build imports %s", pkg)
		}
	}
}
