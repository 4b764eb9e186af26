package compile

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/dottest"
	"github.com/nabla-go/nabla/ops"
)

// shiftOp adds a constant and labels itself with it.
type shiftOp struct{ c float64 }

func (shiftOp) Name() string                                        { return "Shift" }
func (o shiftOp) DotLabel() string                                  { return fmt.Sprintf("Shift +%g", o.c) }
func (shiftOp) Type(in []graph.Type) (graph.Type, error)            { return in[0], graph.CheckArity(in, 1) }
func (shiftOp) Forward(out *tensor.Dense, in []*tensor.Dense) error { return nil }

// dotProgram compiles h = tanh(x·W) + 1 and loss = 0.5·h with the update
// W ← W - 0.1·W; a node nothing needs is left out. Simplification is off,
// so that the drawing keeps the constant 0.5 (it would make 0.5·h a Scale),
// and so is fusion, so that every op has an instruction of its own.
func dotProgram(t *testing.T) *Program {
	t.Helper()
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	W := g.Param("W", graph.NewDense(graph.Float64, 3))
	ops.Exp(x) // dead
	h := graph.Apply(shiftOp{c: 1}, ops.Tanh(ops.Mul(x, W))).SetName("h")
	loss := ops.Mul(h, g.Scalar(0.5, graph.Float64)).SetName("loss")
	p, err := Compile([]*graph.Node{h, loss}, WithChecks(), WithoutPass("simplify"), WithoutPass("fuse"),
		WithUpdates(map[*graph.Node]*graph.Node{W: ops.Sub(W, ops.Scale(W, 0.1))}))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func writeProgram(t *testing.T, p *Program) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteDot(&buf, p); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestWriteDot checks the drawing of a compiled program against the
// program itself: one node per slot and per instruction, the execution
// chain, every read, write and update as an edge; then against its golden
// file.
func TestWriteDot(t *testing.T) {
	p := dotProgram(t)
	out := writeProgram(t, p)
	d := dottest.Check(t, out)

	var wantNodes, wantEdges []string
	for i := range p.Slots() {
		wantNodes = append(wantNodes, fmt.Sprint("s", i))
	}
	for i, in := range p.Instructions() {
		wantNodes = append(wantNodes, fmt.Sprint("i", i))
		if i > 0 {
			wantEdges = append(wantEdges, fmt.Sprintf("i%d->i%d", i-1, i))
		}
		for _, s := range in.In {
			wantEdges = append(wantEdges, fmt.Sprintf("s%d->i%d", s, i))
		}
		for _, s := range in.Out {
			wantEdges = append(wantEdges, fmt.Sprintf("i%d->s%d", i, s))
		}
		want := fmt.Sprintf("#%d %s", i, in.Name())
		switch in.Name() {
		case "Shift":
			want += " +1" // its DotLabel
		case "Scale":
			want = fmt.Sprintf("#%d Scale(0.1)", i)
		}
		if got := d.Node(fmt.Sprint("i", i)).Attrs["label"]; got != want {
			t.Errorf("case instruction %d: got label %q, want %q", i, got, want)
		}
	}
	for _, u := range p.Updates() {
		wantEdges = append(wantEdges, fmt.Sprintf("s%d->s%d", u.From, u.Slot))
	}
	var gotNodes, gotEdges []string
	for _, n := range d.Nodes {
		gotNodes = append(gotNodes, n.ID)
	}
	for _, e := range d.Edges {
		gotEdges = append(gotEdges, e.From+"->"+e.To)
	}
	sort.Strings(wantEdges)
	sort.Strings(gotEdges)
	if fmt.Sprint(gotNodes) != fmt.Sprint(wantNodes) {
		t.Errorf("got nodes %v, want %v", gotNodes, wantNodes)
	}
	if fmt.Sprint(gotEdges) != fmt.Sprint(wantEdges) {
		t.Errorf("got edges %v, want %v", gotEdges, wantEdges)
	}

	// x·W, tanh, shift, 0.5·h, 0.1·W, W - 0.1·W: the dead Exp is gone.
	if got, want := len(p.Instructions()), 6; got != want {
		t.Fatalf("got %d instructions, want %d", got, want)
	}
	slotOf := func(n *graph.Node) string {
		for i := range p.Slots() {
			if slices.Contains(p.SlotNodes(i), n) {
				return fmt.Sprint("s", i)
			}
		}
		t.Fatalf("no slot holds %v", n)
		return ""
	}
	g := p.Graph()
	x, h, loss := g.Node(0), g.Node(5), g.Node(7)
	checks := []struct{ id, attr, want string }{
		{slotOf(x), "label", "slot 0\nfloat64(2,3)\nn0 input \"x\""},
		{slotOf(x), "shape", "invhouse"},
		{slotOf(h), "label", fmt.Sprintf("%s\nfloat64(2,3)\nn5 Shift +1 \"h\"", strings.Replace(slotOf(h), "s", "slot ", 1))},
		{slotOf(h), "shape", "doubleoctagon"},
		{slotOf(loss), "shape", "doubleoctagon"},
		{slotOf(g.Node(6)), "label", fmt.Sprintf("%s\nfloat64()\nn6 const 0.5", strings.Replace(slotOf(g.Node(6)), "s", "slot ", 1))},
	}
	for _, c := range checks {
		if got := d.Node(c.id).Attrs[c.attr]; got != c.want {
			t.Errorf("case %s %s: got %q, want %q", c.id, c.attr, got, c.want)
		}
	}
	dottest.Golden(t, "program.dot", out)
	if again := writeProgram(t, p); !bytes.Equal(again, out) {
		t.Error("a second WriteDot gives other bytes")
	}
}

// TestWriteDotSharedSlot draws a program whose memory plan computes exp in
// place over neg's slot: the slot lists both nodes.
func TestWriteDotSharedSlot(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	neg := ops.Neg(x)
	exp := ops.Exp(neg).SetName("y")
	typ := x.Type()
	p := &Program{
		graph: g,
		slots: []Slot{
			{Type: typ, Kind: graph.KindInput, Node: x},
			{Type: typ, Kind: graph.KindOp, Node: neg},
		},
		instrs: []Instruction{
			{Op: neg.Op(), Node: neg, In: []int{0}, Out: []int{1}},
			{Op: exp.Op(), Node: exp, In: []int{1}, Out: []int{1}},
		},
		inputs:  []*graph.Node{x},
		nodes:   map[*graph.Node]int{x: 0, exp: 1},
		outputs: []*graph.Node{exp},
	}
	d := dottest.Check(t, writeProgram(t, p))
	s1 := d.Node("s1")
	if s1 == nil {
		t.Fatal("slot 1 is not drawn")
	}
	if got, want := s1.Attrs["label"], "slot 1\nfloat64(2)\nn1 Neg\nn2 Exp \"y\""; got != want {
		t.Errorf("got label %q, want %q", got, want)
	}
	if got, want := s1.Attrs["shape"], "doubleoctagon"; got != want {
		t.Errorf("got shape %q, want %q", got, want)
	}
}

type failingWriter struct{}

var errWrite = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestWriteDotErrors(t *testing.T) {
	if err := WriteDot(&bytes.Buffer{}, nil); err == nil || !strings.Contains(err.Error(), "nil program") {
		t.Errorf("nil program: got %v, want an error saying so", err)
	}
	if err := WriteDot(failingWriter{}, dotProgram(t)); !errors.Is(err, errWrite) {
		t.Errorf("failing writer: got %v, want %v", err, errWrite)
	}
}

// TestWriteDotFused draws a fused instruction as a cluster holding the
// instruction and a node per graph node it fuses, linked as the values
// flow; then checks the drawing against its golden file.
func TestWriteDotFused(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	v := g.Input("v", graph.Float64, 3)
	sx := ops.Scale(x, 2)
	sum := ops.Add(sx, v).SetName("z")
	y := ops.Mul(ops.Tanh(sum), ops.Exp(v))
	p, err := Compile([]*graph.Node{y}, WithChecks())
	if err != nil {
		t.Fatal(err)
	}
	out := writeProgram(t, p)
	d := dottest.Check(t, out)
	var fused string
	for i, in := range p.Instructions() {
		if len(in.Absorbed()) > 0 {
			fused = fmt.Sprintf("#%d %s", i, in.Name())
		}
	}
	if fused != "#1 Fused(Scale,Add,Tanh,Mul)" {
		t.Fatalf("got program\n%s\nwant Exp, then the rest fused", p)
	}
	if len(d.Clusters) != 1 || d.Clusters[0].ID != "cluster_i1" || d.Clusters[0].Attrs["label"] != fused {
		t.Fatalf("got clusters %v, want cluster_i1 labelled %q", d.Clusters, fused)
	}
	wantLabels := map[string]string{
		"i1":   fused,
		"f1_0": fmt.Sprintf("n%d Scale(2)", sx.ID()),
		"f1_1": fmt.Sprintf("n%d Add \"z\"", sum.ID()),
		"f1_2": fmt.Sprintf("n%d Tanh", sum.ID()+1),
		"f1_3": fmt.Sprintf("n%d Mul", y.ID()),
	}
	for id, want := range wantLabels {
		n := d.Node(id)
		switch {
		case n == nil:
			t.Errorf("case %s: not drawn", id)
		case n.Attrs["label"] != want || len(n.Clusters) != 1 || n.Clusters[0] != fused:
			t.Errorf("case %s: got label %q in clusters %q, want %q in %q", id, n.Attrs["label"], n.Clusters, want, fused)
		}
	}
	var flow []string
	for _, e := range d.Edges {
		if strings.HasPrefix(e.From, "f1_") {
			flow = append(flow, e.From+"->"+e.To)
		}
	}
	if got, want := strings.Join(flow, " "), "f1_0->f1_1 f1_1->f1_2 f1_2->f1_3 f1_3->i1"; got != want {
		t.Errorf("got flow %s, want %s", got, want)
	}
	dottest.Golden(t, "fused.dot", out)
}

// A fused instruction of two outputs links both output steps to the
// instruction, and each output's slot names its node.
func TestWriteDotFusedOutputs(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4)
	th := ops.Tanh(x).SetName("th")
	y := ops.Sin(th).SetName("y")
	p, err := Compile([]*graph.Node{th, y}, WithChecks())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Instructions()) != 1 || p.Instructions()[0].Multi == nil {
		t.Fatalf("got program\n%s\nwant one fused instruction of two outputs", p)
	}
	d := dottest.Check(t, writeProgram(t, p))
	var toInstr []string
	for _, e := range d.Edges {
		if e.To == "i0" && strings.HasPrefix(e.From, "f0_") {
			toInstr = append(toInstr, e.From)
		}
	}
	if got, want := strings.Join(toInstr, " "), "f0_0 f0_1"; got != want {
		t.Errorf("got edges to the instruction from %s, want %s", got, want)
	}
	for _, n := range []*graph.Node{th, y} {
		s, _ := p.SlotOf(n)
		label := d.Node(fmt.Sprintf("s%d", s)).Attrs["label"]
		if want := fmt.Sprintf("n%d %s %q", n.ID(), n.OpName(), n.Name()); !strings.Contains(label, want) {
			t.Errorf("case %v: slot label %q does not name it (%q)", n, label, want)
		}
	}
}
