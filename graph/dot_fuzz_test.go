package graph_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/dottest"
	"github.com/nabla-go/nabla/ops"
)

// FuzzWriteDot draws graphs whose node, scope and title names are
// arbitrary strings: the output always parses (with gonum's DOT parser, and
// with Graphviz's when dot is installed), and a plain name is drawn as
// itself.
func FuzzWriteDot(f *testing.F) {
	f.Add("x", "hidden", "encoder")
	f.Add("&#9731; &amp;", `\N "quoted" \l`, "line\nbreak\r\n")
	f.Add("bad \xff\xfe", "\x00\x7f\u0085\uFFFD", "{a|b} <c>")
	f.Add(strings.Repeat("long", 5000), strings.Repeat("&", 9000), strings.Repeat(`"`, 9000))
	f.Fuzz(func(t *testing.T, a, b, c string) {
		g := graph.New()
		end := g.Scope(c)
		x := g.Input(a, f64, 2)
		y := ops.Tanh(x).SetName(b)
		end()
		var out bytes.Buffer
		if err := graph.WriteDot(&out, g, graph.DotOptions{Title: c, EdgeShapes: true, Outputs: []*graph.Node{y}}); err != nil {
			t.Fatal(err)
		}
		d := dottest.Parse(t, out.Bytes())
		if plain(a) {
			// Parse has read the label as Graphviz does.
			if label := d.Node("n0").Attrs["label"]; !strings.HasPrefix(label, a+"\n") {
				t.Fatalf("input %q drawn as %q", a, label)
			}
		}
		if dottest.HaveGraphviz() {
			// -Tcanon parses and writes the graph back without laying it
			// out: Graphviz's parser, at a fraction of a rendering's cost.
			cmd := exec.Command("dot", "-Tcanon")
			cmd.Stdin = &out
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("dot -Tcanon: %v: %.500s", err, msg)
			}
		}
	})
}

// plain reports whether WriteDot draws s unchanged: short, printable UTF-8,
// and not empty (a node without a name is drawn as its kind).
func plain(s string) bool {
	if s == "" || len(s) > 1000 || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			return false
		}
	}
	return true
}
