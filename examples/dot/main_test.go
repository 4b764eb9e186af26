package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/internal/dottest"
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
		if err := run(c.args, &out); err != nil {
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
	if err := run([]string{"-svg", path}, &bytes.Buffer{}); err != nil {
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
	err := run([]string{"-svg", filepath.Join(t.TempDir(), "mlp.svg")}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "Graphviz") {
		t.Errorf("got %v, want an error naming Graphviz", err)
	}
}
