package graph_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/dottest"
	"github.com/nabla-go/nabla/ops"
)

var f64 = graph.Float64

func param(g *graph.Graph, name string, shape ...int) *graph.Node {
	return g.Param(name, graph.NewDense(f64, shape...))
}

// forwardGraph is a one-layer network: h = tanh(x·W + b), loss = mean(h²)·0.5.
func forwardGraph() (*graph.Graph, *graph.Node) {
	g := graph.New()
	x := g.Input("x", f64, 2, 3)
	W := param(g, "W", 3, 4)
	b := param(g, "b", 4)
	h := ops.Tanh(ops.Add(ops.MatMul(x, W), b)).SetName("h")
	loss := ops.Mul(ops.Mean(ops.Square(h)), g.Scalar(0.5, f64)).SetName("loss")
	return g, loss
}

// gradientGraph differentiates forwardGraph's loss with respect to W and b
// in a scope "train": the gradient cluster nests in it.
func gradientGraph() (g *graph.Graph, loss *graph.Node, grads []*graph.Node) {
	g, loss = forwardGraph()
	defer g.Scope("train")()
	grads, err := compile.Grad(loss, g.Node(1), g.Node(2))
	if err != nil {
		g.Fail(err)
	}
	return g, loss, grads
}

// customOp multiplies by a constant and labels itself with it.
type customOp struct{ c float64 }

func (customOp) Name() string                                        { return "MulConst" }
func (o customOp) DotLabel() string                                  { return fmt.Sprintf("MulConst ×%g", o.c) }
func (customOp) Type(in []graph.Type) (graph.Type, error)            { return in[0], graph.CheckArity(in, 1) }
func (customOp) Forward(out *tensor.Dense, in []*tensor.Dense) error { return nil }

// tricky holds every character DOT or Graphviz might misread in a name.
const tricky = "say \"hi\" {a|b} <c> \\N\\l C:\\dir\\ end\\"

type dotCase struct {
	name  string
	build func() (*graph.Graph, graph.DotOptions)
	check func(t *testing.T, g *graph.Graph, d *dottest.Graph)
}

var dotCases = []dotCase{
	{
		name: "forward",
		build: func() (*graph.Graph, graph.DotOptions) {
			g, _ := forwardGraph()
			return g, graph.DotOptions{Title: "one layer", EdgeShapes: true}
		},
		check: func(t *testing.T, g *graph.Graph, d *dottest.Graph) {
			checkAllDrawn(t, g, d)
			if got := d.Attrs["label"]; got != "one layer" {
				t.Errorf("title: got %q, want %q", got, "one layer")
			}
			checkLabels(t, d, map[string]string{
				"n0": "x\ninput\nfloat64(2,3)",
				"n1": "W\nparam\nfloat64(3,4)",
				"n3": "MatMul\nfloat64(2,4)",
				"n5": "h\nTanh\nfloat64(2,4)",
				"n8": "const 0.5\nfloat64()",
				"n9": "loss\nMul\nfloat64()",
			})
			wantShapes := map[string]string{"n0": "invhouse", "n1": "box3d", "n8": "note", "n5": "ellipse"}
			for id, want := range wantShapes {
				if got := d.Node(id).Attrs["shape"]; got != want {
					t.Errorf("case %s: got shape %q, want %q", id, got, want)
				}
			}
			// b (4) broadcasts into Add: the edge says so.
			if e := findEdge(d, "n2", "n4"); e == nil || e.Attrs["label"] != "(4)" {
				t.Errorf("edge n2 -> n4: got %+v, want label (4)", e)
			}
		},
	},
	{
		name: "gradients",
		build: func() (*graph.Graph, graph.DotOptions) {
			g, _, _ := gradientGraph()
			return g, graph.DotOptions{}
		},
		check: func(t *testing.T, g *graph.Graph, d *dottest.Graph) {
			checkAllDrawn(t, g, d)
			for _, n := range g.Nodes() {
				var want []string
				if n.ID() > lossID {
					want = []string{"train", "∇ w.r.t. W, b"}
				}
				if got := d.Node(nodeID(n)).Clusters; !slices.Equal(got, want) {
					t.Errorf("case %v: got clusters %q, want %q", n, got, want)
				}
			}
			checkClusterStyles(t, d, map[string]string{"train": "rounded", "∇ w.r.t. W, b": "filled,dashed"})
		},
	},
	{
		name: "gradients_collapsed",
		build: func() (*graph.Graph, graph.DotOptions) {
			g, loss, grads := gradientGraph()
			return g, graph.DotOptions{Outputs: append([]*graph.Node{loss}, grads...), CollapseGradients: true}
		},
		check: func(t *testing.T, g *graph.Graph, d *dottest.Graph) {
			// Every node the outputs need is drawn, as itself or, inside
			// the gradient scope, as the box; the gradients themselves are
			// drawn beside the box.
			_, loss, grads := gradientGraph()
			outputs := append([]*graph.Node{loss}, grads...)
			drawnAs := func(n *graph.Node) string {
				if n.ID() > lossID && !slices.ContainsFunc(outputs, func(o *graph.Node) bool { return o.ID() == n.ID() }) {
					return "grad0"
				}
				return nodeID(n)
			}
			need := ancestors(outputs)
			wantNodes := map[string]bool{}
			wantEdges := map[[2]string]int{}
			inside := 0
			for _, n := range g.Nodes() {
				if !need[n.ID()] {
					continue
				}
				to := drawnAs(n)
				if to == "grad0" {
					inside++
				}
				wantNodes[to] = true
				for _, in := range n.Inputs() {
					from := drawnAs(in)
					switch {
					case from == to:
					case from == "grad0" || to == "grad0":
						wantEdges[[2]string{from, to}] = 1
					default:
						wantEdges[[2]string{from, to}]++
					}
				}
			}
			var want []string
			for id := range wantNodes {
				want = append(want, id)
			}
			checkDrawn(t, d, want, wantEdges)
			checkLabels(t, d, map[string]string{"grad0": fmt.Sprintf("∇ w.r.t. W, b\n%d nodes", inside)})
			for _, gr := range grads {
				if got := d.Node(nodeID(gr)).Attrs["shape"]; got != "doubleoctagon" {
					t.Errorf("case %v: got shape %q, want doubleoctagon", gr, got)
				}
			}
			for _, id := range []string{"grad0", nodeID(grads[0]), nodeID(grads[1])} {
				if got, want := d.Node(id).Clusters, []string{"train"}; !slices.Equal(got, want) {
					t.Errorf("case %s: got clusters %q, want %q", id, got, want)
				}
			}
		},
	},
	{
		name: "scopes",
		build: func() (*graph.Graph, graph.DotOptions) {
			g := graph.New()
			x := g.Input("x", f64, 4)
			endEnc := g.Scope("encoder")
			end := g.Scope("layer1")
			h := ops.Tanh(ops.Mul(x, param(g, "W1", 4)))
			end()
			end = g.Scope("layer2")
			h = ops.Tanh(ops.Mul(h, param(g, "W2", 4)))
			end()
			h = ops.Neg(h).SetName("code")
			endEnc()
			end = g.Scope("decoder")
			ops.Exp(h)
			end()
			return g, graph.DotOptions{}
		},
		check: func(t *testing.T, g *graph.Graph, d *dottest.Graph) {
			checkAllDrawn(t, g, d)
			want := map[string][]string{
				"n0": nil,
				"n1": {"encoder", "layer1"}, "n3": {"encoder", "layer1"},
				"n4": {"encoder", "layer2"}, "n6": {"encoder", "layer2"},
				"n7": {"encoder"},
				"n8": {"decoder"},
			}
			for id, w := range want {
				if got := d.Node(id).Clusters; !slices.Equal(got, w) {
					t.Errorf("case %s: got clusters %q, want %q", id, got, w)
				}
			}
		},
	},
	{
		name: "names",
		build: func() (*graph.Graph, graph.DotOptions) {
			g := graph.New()
			end := g.Scope("scope " + tricky)
			x := g.Input(tricky, f64, 2)
			y := ops.Neg(x).SetName("two\nlines\r\nand\ta tab, ∇ü漢字")
			end()
			ops.Exp(y).SetName("bad utf8 \xff \uFFFD}")
			return g, graph.DotOptions{Title: "title " + tricky}
		},
		check: func(t *testing.T, g *graph.Graph, d *dottest.Graph) {
			checkAllDrawn(t, g, d)
			checkLabels(t, d, map[string]string{
				"n0": tricky + "\ninput\nfloat64(2)",
				"n1": "two\nlines\nand\\ta tab, ∇ü漢字\nNeg\nfloat64(2)",
				"n2": "bad utf8 \\xff \\ufffd}\nExp\nfloat64(2)",
			})
			if got, want := d.Node("n0").Clusters, []string{"scope " + tricky}; !slices.Equal(got, want) {
				t.Errorf("cluster: got %q, want %q", got, want)
			}
			if got, want := d.Attrs["label"], "title "+tricky; got != want {
				t.Errorf("title: got %q, want %q", got, want)
			}
		},
	},
	{
		name: "custom",
		build: func() (*graph.Graph, graph.DotOptions) {
			g := graph.New()
			x := g.Input("x", f64, 2, 4)
			halves := graph.ApplyMulti(splitOp{}, graph.Apply(customOp{c: 2.5}, x))
			ops.Add(halves[0], halves[1])
			g.Scalar(0.1, graph.Float32) // unused, but drawn: no Outputs
			return g, graph.DotOptions{}
		},
		check: func(t *testing.T, g *graph.Graph, d *dottest.Graph) {
			checkAllDrawn(t, g, d)
			checkLabels(t, d, map[string]string{
				"n1": "MulConst ×2.5\nfloat64(2,4)",
				"n2": "Split[0]\nfloat64(2,1)",
				"n3": "Split[1]\nfloat64(2,3)",
				"n5": "const 0.1\nfloat32()", // float32's shortest form, not 0.10000000149011612
			})
		},
	},
	{
		name: "outputs",
		build: func() (*graph.Graph, graph.DotOptions) {
			g, _ := forwardGraph()
			return g, graph.DotOptions{Outputs: []*graph.Node{g.Node(5)}} // h
		},
		check: func(t *testing.T, g *graph.Graph, d *dottest.Graph) {
			if got, want := nodeIDs(d), []string{"n0", "n1", "n2", "n3", "n4", "n5"}; !slices.Equal(got, want) {
				t.Errorf("got nodes %v, want %v", got, want)
			}
			for _, n := range d.Nodes {
				want := "ellipse"
				switch n.ID {
				case "n0":
					want = "invhouse"
				case "n1", "n2":
					want = "box3d"
				case "n5":
					want = "doubleoctagon"
				}
				if got := n.Attrs["shape"]; got != want {
					t.Errorf("case %s: got shape %q, want %q", n.ID, got, want)
				}
			}
		},
	},
}

// TestWriteDot writes each case's graph, checks it parses (and renders,
// with Graphviz) with the labels and clusters wanted, and compares it with
// its golden file.
func TestWriteDot(t *testing.T) {
	for _, c := range dotCases {
		t.Run(c.name, func(t *testing.T) {
			g, opts := c.build()
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := graph.WriteDot(&buf, g, opts); err != nil {
				t.Fatal(err)
			}
			d := dottest.Check(t, buf.Bytes())
			c.check(t, g, d)
			dottest.Golden(t, c.name+".dot", buf.Bytes())
		})
	}
}

// TestWriteDotDeterministic builds each case twice and writes each graph
// twice: the bytes never change.
func TestWriteDotDeterministic(t *testing.T) {
	for _, c := range dotCases {
		var outs [3]bytes.Buffer
		g1, opts1 := c.build()
		g2, opts2 := c.build()
		for i, run := range []struct {
			g    *graph.Graph
			opts graph.DotOptions
		}{{g1, opts1}, {g1, opts1}, {g2, opts2}} {
			if err := graph.WriteDot(&outs[i], run.g, run.opts); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(outs[0].Bytes(), outs[1].Bytes()) || !bytes.Equal(outs[0].Bytes(), outs[2].Bytes()) {
			t.Errorf("case %s: output differs between runs", c.name)
		}
	}
}

// TestWriteDotSVG renders a graph with Graphviz and counts its nodes.
func TestWriteDotSVG(t *testing.T) {
	g, _, _ := gradientGraph()
	var buf bytes.Buffer
	if err := graph.WriteDot(&buf, g, graph.DotOptions{EdgeShapes: true}); err != nil {
		t.Fatal(err)
	}
	svg := dottest.RenderSVG(t, buf.Bytes())
	groups := regexp.MustCompile(`<g id="node[0-9]+" class="node">`).FindAll(svg, -1)
	if len(groups) != g.Len() {
		t.Errorf("got %d SVG node groups, want %d", len(groups), g.Len())
	}
	drawn := dottest.SVGNodes(t, svg)
	for _, n := range g.Nodes() {
		if _, ok := drawn[nodeID(n)]; !ok {
			t.Errorf("case %v: not drawn", n)
		}
	}
}

type failingWriter struct{}

var errWrite = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestWriteDotErrors(t *testing.T) {
	poisoned := graph.New()
	x := poisoned.Input("x", f64, 2)
	ops.Add(x, poisoned.Input("y", f64, 3))
	other, y := forwardGraph()
	_ = other
	g, _ := forwardGraph()
	cases := []struct {
		name string
		g    *graph.Graph
		opts graph.DotOptions
		w    func() error // the error wanted, by identity; nil: any error
		msg  string
	}{
		{name: "poisoned", g: poisoned, w: poisoned.Err},
		{name: "nil graph", msg: "nil graph"},
		{name: "nil output", g: g, opts: graph.DotOptions{Outputs: []*graph.Node{nil}}, msg: "output 0 is nil"},
		{name: "foreign output", g: g, opts: graph.DotOptions{Outputs: []*graph.Node{g.Node(0), y}}, msg: "output 1"},
		{name: "poisoned output", g: poisoned, opts: graph.DotOptions{Outputs: []*graph.Node{x}}, w: poisoned.Err},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		err := graph.WriteDot(&buf, c.g, c.opts)
		switch {
		case err == nil:
			t.Errorf("case %s: got no error", c.name)
		case c.w != nil && err != c.w():
			t.Errorf("case %s: got %v, want %v", c.name, err, c.w())
		case !strings.Contains(err.Error(), c.msg):
			t.Errorf("case %s: got %v, want it to mention %q", c.name, err, c.msg)
		}
		if buf.Len() != 0 {
			t.Errorf("case %s: wrote %d bytes, want none", c.name, buf.Len())
		}
	}
	if err := graph.WriteDot(failingWriter{}, g, graph.DotOptions{}); !errors.Is(err, errWrite) {
		t.Errorf("failing writer: got %v, want %v", err, errWrite)
	}
}

func TestDotQuote(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`a"b`, `"a\"b"`},
		{`a\b`, `"a\\b"`},
		{`end\`, `"end\\"`},
		{`\N\G\l`, `"\\N\\G\\l"`},
		{"a\nb", `"a\nb"`},
		{"a\r\nb\rc", `"a\nb\nc"`},
		{"tab\there\x00\x7f", `"tab\\there\\x00\\x7f"`},
		{"{a|b} <c>", `"{a|b} <c>"`},
		{"∇ ü 漢字", `"∇ ü 漢字"`},
		{"bad \xff\xfe", `"bad \\xff\\xfe"`},
		{"\uFFFD\u0085", `"\\ufffd\\u0085"`},
		{"&#9731; &amp; &", `"&amp;#9731; &amp;amp; &amp;"`},
		{strings.Repeat("x", 5000), `"` + strings.Repeat("x", graph.DotQuoteLimit) + `…"`},
	}
	for _, c := range cases {
		if got := graph.DotQuote(c.in); got != c.want {
			t.Errorf("case %q: got %s, want %s", c.in, got, c.want)
		}
	}
}

// TestDotQuoteRoundTrip quotes random strings of DOT's special characters
// and reads them back as Graphviz would.
func TestDotQuoteRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	alphabet := []rune("ab \"\\\n{}<>|;,=[]-∇漢NGl&#93")
	for range 1000 {
		r := make([]rune, rng.IntN(12))
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(r)
		got, err := dottest.Unquote(graph.DotQuote(s))
		if err != nil || got != s {
			t.Fatalf("case %q: got %q (%v), want it back", s, got, err)
		}
	}
}

func nodeID(n *graph.Node) string { return fmt.Sprint("n", n.ID()) }

func nodeIDs(d *dottest.Graph) []string {
	ids := make([]string, len(d.Nodes))
	for i, n := range d.Nodes {
		ids[i] = n.ID
	}
	return ids
}

// lossID is the ID of forwardGraph's loss: later nodes are gradients.
const lossID = 9

// ancestors marks, by ID, the nodes that outputs need.
func ancestors(outputs []*graph.Node) map[int]bool {
	need := map[int]bool{}
	stack := slices.Clone(outputs)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !need[n.ID()] {
			need[n.ID()] = true
			stack = append(stack, n.Inputs()...)
		}
	}
	return need
}

// checkAllDrawn checks that d draws every node of g once and every input
// of every node as an edge.
func checkAllDrawn(t *testing.T, g *graph.Graph, d *dottest.Graph) {
	t.Helper()
	var ids []string
	edges := map[[2]string]int{}
	for _, n := range g.Nodes() {
		ids = append(ids, nodeID(n))
		for _, in := range n.Inputs() {
			edges[[2]string{nodeID(in), nodeID(n)}]++
		}
	}
	checkDrawn(t, d, ids, edges)
}

// checkDrawn checks that d draws exactly the nodes ids, once each, and the
// edges counted.
func checkDrawn(t *testing.T, d *dottest.Graph, ids []string, edges map[[2]string]int) {
	t.Helper()
	got := nodeIDs(d)
	slices.Sort(got)
	slices.Sort(ids)
	if !slices.Equal(got, ids) {
		t.Errorf("got nodes %v, want %v", got, ids)
	}
	gotEdges := map[[2]string]int{}
	for _, e := range d.Edges {
		gotEdges[[2]string{e.From, e.To}]++
	}
	if fmt.Sprint(gotEdges) != fmt.Sprint(edges) {
		t.Errorf("got edges %v, want %v", gotEdges, edges)
	}
}

// checkClusterStyles checks the style of the clusters labelled as given.
func checkClusterStyles(t *testing.T, d *dottest.Graph, want map[string]string) {
	t.Helper()
	for label, style := range want {
		i := slices.IndexFunc(d.Clusters, func(c dottest.Cluster) bool { return c.Attrs["label"] == label })
		if i < 0 {
			t.Errorf("case %s: no such cluster", label)
			continue
		}
		if got := d.Clusters[i].Attrs["style"]; got != style {
			t.Errorf("case %s: got style %q, want %q", label, got, style)
		}
	}
}

func checkLabels(t *testing.T, d *dottest.Graph, want map[string]string) {
	t.Helper()
	for id, w := range want {
		n := d.Node(id)
		if n == nil {
			t.Errorf("case %s: not drawn", id)
			continue
		}
		if got := n.Attrs["label"]; got != w {
			t.Errorf("case %s: got label %q, want %q", id, got, w)
		}
	}
}

func findEdge(d *dottest.Graph, from, to string) *dottest.Edge {
	for i, e := range d.Edges {
		if e.From == from && e.To == to {
			return &d.Edges[i]
		}
	}
	return nil
}
