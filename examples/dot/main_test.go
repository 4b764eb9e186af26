package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/internal/testkit/dottest"
)

// TestRun writes each drawing the command offers and checks it parses (and
// renders, with Graphviz) with the nodes it should have.
func TestRun(t *testing.T) {
	cases := []struct {
		args []string
		want []string // label prefixes that must be drawn
	}{
		{nil, []string{"loss\nMean\nfloat64()", "layer1.W'\nSub\nfloat64(4,16)"}},
		{[]string{"-collapse", "-shapes"}, []string{"∇ w.r.t. layer1.W, layer1.b, layer2.W, layer2.b\n"}},
		{[]string{"-compiled"}, []string{"#0 MatMul"}},
	}
	for _, c := range cases {
		var out bytes.Buffer
		if err := run(c.args, &out, io.Discard); err != nil {
			t.Fatalf("case %v: %v", c.args, err)
		}
		d := dottest.Check(t, out.Bytes())
		for _, w := range c.want {
			found := false
			for _, n := range d.Nodes {
				found = found || strings.HasPrefix(n.Attrs["label"], w)
			}
			if !found {
				t.Errorf("case %v: no node labelled %q...", c.args, w)
			}
		}
	}
}

func TestRunSVG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mlp.svg")
	if !dottest.HaveGraphviz() {
		t.Skip("Graphviz's dot is not installed")
	}
	if err := run([]string{"-svg", path}, &bytes.Buffer{}, io.Discard); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), "<svg") {
		t.Errorf("%s is not an SVG", path)
	}
}

func TestRunSVGWithoutGraphviz(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := run([]string{"-svg", filepath.Join(t.TempDir(), "mlp.svg")}, &bytes.Buffer{}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "Graphviz") {
		t.Errorf("got %v, want an error naming Graphviz", err)
	}
}

// The exit codes of Go's commands: -h prints the usage and succeeds, a
// mistake on the command line is 2 after the usage, a failure 1 after
// its error.
func TestCommandExitCodes(t *testing.T) {
	noGraphviz := t.TempDir()
	for _, c := range []struct {
		args       []string
		path       string // PATH, if set
		code       int
		stdout     bool     // whether DOT is written
		wantStderr []string // in stderr, in order
	}{
		{[]string{"-h"}, "", 0, false, []string{"Usage of dot:", "-svg file"}},
		{[]string{"-help"}, "", 0, false, []string{"Usage of dot:"}},
		{nil, "", 0, true, nil},
		{[]string{"-nope"}, "", 2, false, []string{"flag provided but not defined: -nope", "Usage of dot:"}},
		{[]string{"extra"}, "", 2, false, []string{`dot: unexpected arguments ["extra"]`, "Usage of dot:"}},
		{[]string{"-svg", filepath.Join(noGraphviz, "x.svg")}, noGraphviz, 1, false, []string{"dot: -svg needs Graphviz's dot command"}},
	} {
		if c.path != "" {
			t.Setenv("PATH", c.path)
		}
		var stdout, stderr bytes.Buffer
		code := command(c.args, &stdout, &stderr)
		if code != c.code || (stdout.Len() > 0) != c.stdout {
			t.Errorf("case %q: exit code %d with %d bytes of DOT, want %d and DOT: %v", c.args, code, stdout.Len(), c.code, c.stdout)
		}
		rest := stderr.String()
		for _, w := range c.wantStderr {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("case %q: stderr %q lacks %q", c.args, stderr.String(), w)
				break
			}
			rest = rest[i+len(w):]
		}
		if c.code == 0 && strings.Contains("\n"+stderr.String(), "\ndot: ") {
			t.Errorf("case %q: stderr %q reports an error", c.args, stderr.String())
		}
	}
}
