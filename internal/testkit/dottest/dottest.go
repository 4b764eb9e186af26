package dottest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/gonum/graph/formats/dot"
	"gonum.org/v1/gonum/graph/formats/dot/ast"
)

var update = flag.Bool("update", false, "rewrite the golden DOT files in testdata")

// Graph is a parsed DOT digraph: its node and edge statements, with
// attribute values as Graphviz reads them (see Unquote).
type Graph struct {
	Attrs    map[string]string // graph attributes at the top level
	Nodes    []Node            // node statements, in order
	Edges    []Edge            // edge statements, in order
	Clusters []Cluster         // cluster subgraphs, in order of their end
}

// Cluster is a cluster subgraph and its attributes.
type Cluster struct {
	ID    string
	Attrs map[string]string
}

// Node is a node statement.
type Node struct {
	ID       string
	Attrs    map[string]string
	Clusters []string // labels of the enclosing clusters, outermost first
}

// Edge is an edge statement between two nodes.
type Edge struct {
	From, To string
	Attrs    map[string]string
}

// Node returns the statement of the node named id, or nil.
func (g *Graph) Node(id string) *Node {
	for i := range g.Nodes {
		if g.Nodes[i].ID == id {
			return &g.Nodes[i]
		}
	}
	return nil
}

// Parse parses data with gonum's DOT parser and returns its statements,
// failing t if data is not one digraph of node, edge, attribute and
// subgraph statements whose quoted values Unquote accepts.
func Parse(t testing.TB, data []byte) *Graph {
	t.Helper()
	f, err := dot.ParseBytes(data)
	if err != nil {
		t.Fatalf("DOT does not parse: %v\n%s", err, data)
	}
	if len(f.Graphs) != 1 || !f.Graphs[0].Directed {
		t.Fatalf("DOT holds %d graphs, want one digraph", len(f.Graphs))
	}
	g := &Graph{Attrs: map[string]string{}}
	if err := g.collect(f.Graphs[0].Stmts, nil, g.Attrs); err != nil {
		t.Fatalf("DOT: %v\n%s", err, data)
	}
	return g
}

// collect walks statements, recording nodes and edges; attrs receives the
// attribute statements of the enclosing (sub)graph.
func (g *Graph) collect(stmts []ast.Stmt, clusters []string, attrs map[string]string) error {
	for _, s := range stmts {
		switch s := s.(type) {
		case *ast.NodeStmt:
			a, err := attrMap(s.Attrs)
			if err != nil {
				return fmt.Errorf("node %s: %v", s.Node.ID, err)
			}
			g.Nodes = append(g.Nodes, Node{ID: s.Node.ID, Attrs: a, Clusters: clusters})
		case *ast.EdgeStmt:
			a, err := attrMap(s.Attrs)
			if err != nil {
				return fmt.Errorf("edge from %s: %v", s.From, err)
			}
			from, okFrom := s.From.(*ast.Node)
			to, okTo := s.To.Vertex.(*ast.Node)
			if !okFrom || !okTo || s.To.To != nil || !s.To.Directed {
				return fmt.Errorf("edge %v is not a single directed edge between nodes", s)
			}
			g.Edges = append(g.Edges, Edge{From: from.ID, To: to.ID, Attrs: a})
		case *ast.Attr:
			v, err := Unquote(s.Val)
			if err != nil {
				return fmt.Errorf("attribute %s: %v", s.Key, err)
			}
			attrs[s.Key] = v
		case *ast.Subgraph:
			sub := map[string]string{}
			// The cluster's label statement precedes its nodes, but collect
			// them first and name the nodes after.
			first := len(g.Nodes)
			if err := g.collect(s.Stmts, append(clusters[:len(clusters):len(clusters)], ""), sub); err != nil {
				return err
			}
			if !strings.HasPrefix(s.ID, "cluster") {
				return fmt.Errorf("subgraph %s is not a cluster", s.ID)
			}
			g.Clusters = append(g.Clusters, Cluster{ID: s.ID, Attrs: sub})
			depth := len(clusters)
			for i := first; i < len(g.Nodes); i++ {
				g.Nodes[i].Clusters[depth] = sub["label"]
			}
		default:
			return fmt.Errorf("unexpected statement %v", s)
		}
	}
	return nil
}

func attrMap(attrs []*ast.Attr) (map[string]string, error) {
	m := map[string]string{}
	for _, a := range attrs {
		v, err := Unquote(a.Val)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %v", a.Key, err)
		}
		m[a.Key] = v
	}
	return m, nil
}

// Unquote returns the text Graphviz draws for an attribute value: a bare ID
// as it is; a quoted string without its quotes, with \" and \\ unescaped
// and \n as a line break, and HTML entities ("&amp;", "&#9731;") decoded,
// as Graphviz decodes them. It rejects every other escape: nabla never
// writes them, and Graphviz would replace \N, \G and the like with names.
func Unquote(v string) (string, error) {
	if !strings.HasPrefix(v, `"`) {
		return v, nil
	}
	if len(v) < 2 || !strings.HasSuffix(v, `"`) {
		return "", fmt.Errorf("unterminated string %s", v)
	}
	var b strings.Builder
	body := v[1 : len(v)-1]
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '"':
			return "", fmt.Errorf("unescaped quote in %s", v)
		case c == '\n' || c == '\r':
			return "", fmt.Errorf("raw line break in %s", v)
		case c != '\\':
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(body) {
			return "", fmt.Errorf("string %s ends in a backslash", v)
		}
		switch body[i] {
		case '"', '\\':
			b.WriteByte(body[i])
		case 'n':
			b.WriteByte('\n')
		default:
			return "", fmt.Errorf("escape \\%c in %s", body[i], v)
		}
	}
	return html.UnescapeString(b.String()), nil
}

// Golden compares got with the file testdata/name, or rewrites the file
// when the tests run with -update.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the tests with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			g, w := lineAt(gl, i), lineAt(wl, i)
			if g != w {
				t.Fatalf("%s: line %d: got %q, want %q (run with -update if the change is intended)", path, i+1, g, w)
			}
		}
	}
}

func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "<end of file>"
}

// HaveGraphviz reports whether Graphviz's dot command is on PATH.
func HaveGraphviz() bool {
	_, err := exec.LookPath("dot")
	return err == nil
}

// RenderSVG renders data with Graphviz's dot -Tsvg, failing t if dot fails
// or complains; it skips the test when Graphviz is not installed.
func RenderSVG(t testing.TB, data []byte) []byte {
	t.Helper()
	if !HaveGraphviz() {
		t.Skip("Graphviz's dot is not installed")
	}
	cmd := exec.Command("dot", "-Tsvg")
	cmd.Stdin = bytes.NewReader(data)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("dot -Tsvg: %v: %s\n%s", err, stderr.Bytes(), data)
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		// Font configuration notes come from the machine, not the DOT.
		if line != "" && !strings.HasPrefix(line, "Fontconfig") {
			t.Fatalf("dot -Tsvg complains: %s\n%s", stderr.Bytes(), data)
		}
	}
	return stdout.Bytes()
}

var svgNodeGroup = regexp.MustCompile(`<g id="node[0-9]+" class="node">`)

// SVGNodes returns, for each node group of a Graphviz SVG, its title (the
// DOT node's name) and its text lines joined by line breaks. It fails t if
// the SVG is not well formed, a title repeats, or the number of groups
// differs from the number of `<g id="node..." class="node">` openings.
func SVGNodes(t testing.TB, svg []byte) map[string]string {
	t.Helper()
	labels, err := svgNodes(svg)
	if err != nil {
		t.Fatalf("SVG: %v", err)
	}
	if n := len(svgNodeGroup.FindAll(svg, -1)); n != len(labels) {
		t.Fatalf("SVG has %d node groups but %d distinct node titles", n, len(labels))
	}
	return labels
}

func svgNodes(svg []byte) (map[string]string, error) {
	dec := xml.NewDecoder(bytes.NewReader(svg))
	dec.Strict = false // Graphviz's doctype names an external DTD
	labels := map[string]string{}
	var (
		inNode, inTitle, inText bool
		depth, nodeDepth        int
		title                   string
		lines                   []string
	)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return labels, nil
		}
		if err != nil {
			return nil, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case tok.Name.Local == "g" && attr(tok, "class") == "node":
				inNode, nodeDepth, title, lines = true, depth, "", nil
			case inNode && tok.Name.Local == "title":
				inTitle = true
			case inNode && tok.Name.Local == "text":
				inText = true
				lines = append(lines, "")
			}
		case xml.CharData:
			switch {
			case inTitle:
				title += string(tok)
			case inText:
				lines[len(lines)-1] += string(tok)
			}
		case xml.EndElement:
			switch {
			case tok.Name.Local == "title":
				inTitle = false
			case tok.Name.Local == "text":
				inText = false
			case inNode && depth == nodeDepth:
				if _, dup := labels[title]; dup {
					return nil, fmt.Errorf("node %s drawn twice", title)
				}
				labels[title] = strings.Join(lines, "\n")
				inNode = false
			}
			depth--
		}
	}
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// Check parses data (see Parse) and, when Graphviz is installed, renders it
// and checks that the SVG draws exactly one node per node statement, each
// with the text of its label attribute.
func Check(t testing.TB, data []byte) *Graph {
	t.Helper()
	g := Parse(t, data)
	if !HaveGraphviz() {
		return g
	}
	drawn := SVGNodes(t, RenderSVG(t, data))
	if len(drawn) != len(g.Nodes) {
		t.Fatalf("SVG draws %d nodes, want %d\n%s", len(drawn), len(g.Nodes), data)
	}
	for _, n := range g.Nodes {
		text, ok := drawn[n.ID]
		if !ok {
			t.Fatalf("node %s is not drawn", n.ID)
		}
		if want := n.Attrs["label"]; text != want {
			t.Errorf("node %s: drawn as %q, want %q", n.ID, text, want)
		}
	}
	return g
}
