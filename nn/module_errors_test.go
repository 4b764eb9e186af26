package nn_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
)

// moduleMethods is every exported method of nn's modules that builds from
// an input node (Forward, Step, Attend, Run), called with a nil input: the
// error it must give, in the module's name as nn's other errors are
// ("nn.Linear", never "nn.Linear.Forward"), and the call.
var moduleMethods = map[string]struct {
	want string                                     // the error, less " at " and the caller's line
	call func(g *graph.Graph) (*graph.Node, string) // the result and the line of the call
}{
	"Tanh.Forward":    {`nabla: nn.Tanh: the input is nil`, func(*graph.Graph) (*graph.Node, string) { return nn.Tanh{}.Forward(nil), lineAt(0) }},
	"ReLU.Forward":    {`nabla: nn.ReLU: the input is nil`, func(*graph.Graph) (*graph.Node, string) { return nn.ReLU{}.Forward(nil), lineAt(0) }},
	"Sigmoid.Forward": {`nabla: nn.Sigmoid: the input is nil`, func(*graph.Graph) (*graph.Node, string) { return nn.Sigmoid{}.Forward(nil), lineAt(0) }},
	"SiLU.Forward":    {`nabla: nn.SiLU: the input is nil`, func(*graph.Graph) (*graph.Node, string) { return nn.SiLU{}.Forward(nil), lineAt(0) }},
	"GELU.Forward":    {`nabla: nn.GELU: the input is nil`, func(*graph.Graph) (*graph.Node, string) { return nn.GELU{}.Forward(nil), lineAt(0) }},
	"Flatten.Forward": {`nabla: nn.Flatten: the input is nil`, func(*graph.Graph) (*graph.Node, string) { return nn.Flatten{}.Forward(nil), lineAt(0) }},
	"MaxPool2d.Forward": {`nabla: nn.MaxPool2d: the input is nil`, func(*graph.Graph) (*graph.Node, string) {
		return nn.MaxPool2d{}.Forward(nil), lineAt(0)
	}},
	"AvgPool2d.Forward": {`nabla: nn.AvgPool2d: the input is nil`, func(*graph.Graph) (*graph.Node, string) {
		return nn.AvgPool2d{}.Forward(nil), lineAt(0)
	}},
	"Linear.Forward": {`nabla: nn.Linear: "fc": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewLinear(g, "fc", 3, 2, true).Forward(nil), lineAt(0)
	}},
	"Conv2d.Forward": {`nabla: nn.Conv2d: "c": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewConv2d(g, "c", 3, 2, []int{3, 3}, true, ops.ConvOptions{}).Forward(nil), lineAt(0)
	}},
	"ConvTranspose2d.Forward": {`nabla: nn.ConvTranspose2d: "c": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewConvTranspose2d(g, "c", 3, 2, []int{3, 3}, true, ops.ConvOptions{}).Forward(nil), lineAt(0)
	}},
	"Embedding.Forward": {`nabla: nn.Embedding: "e": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewEmbedding(g, "e", 3, 2).Forward(nil), lineAt(0)
	}},
	"LayerNorm.Forward": {`nabla: nn.LayerNorm: "ln": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewLayerNorm(g, "ln", 3, 1e-5).Forward(nil), lineAt(0)
	}},
	"BatchNorm.Forward": {`nabla: nn.BatchNorm: "bn": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewBatchNorm2d(g, "bn", 3, 1e-5, 0.1).Forward(nil), lineAt(0)
	}},
	"Dropout.Forward": {`nabla: nn.Dropout: "d": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewDropout(g, "d", 0.5).Forward(nil), lineAt(0)
	}},
	"MultiheadAttention.Forward": {`nabla: nn.MultiheadAttention: "a": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewMultiheadAttention(g, "a", 4, 2, true).Forward(nil), lineAt(0)
	}},
	"MultiheadAttention.Attend": {`nabla: nn.MultiheadAttention: k is nil`, func(g *graph.Graph) (*graph.Node, string) {
		q := g.Input("q", graph.Float64, 1, 2, 4)
		return nn.NewMultiheadAttention(g, "a", 4, 2, true).Attend(q, nil, q, nil, false), lineAt(0)
	}},
	"TransformerBlock.Forward": {`nabla: nn.TransformerBlock: "t": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewTransformerBlock(g, "t", 4, 2, 8, 0, true).Forward(nil), lineAt(0)
	}},
	"Sequential.Forward": {`nabla: nn.Sequential: "s": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewSequential("s", nn.NewLinear(g, "fc", 3, 2, true)).Forward(nil), lineAt(0)
	}},
	"RNN.Forward": {`nabla: nn.RNN: "r": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewRNN(g, "r", 3, 2, nn.RecurrentConfig{}).Forward(nil), lineAt(0)
	}},
	"RNN.Run": {`nabla: nn.RNN: "r": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		out, _ := nn.NewRNN(g, "r", 3, 2, nn.RecurrentConfig{}).Run(nil, nil)
		return out, lineAt(-1)
	}},
	"LSTM.Forward": {`nabla: nn.LSTM: "l": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewLSTM(g, "l", 3, 2, nn.RecurrentConfig{}).Forward(nil), lineAt(0)
	}},
	"LSTM.Run": {`nabla: nn.LSTM: "l": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		out, _, _ := nn.NewLSTM(g, "l", 3, 2, nn.RecurrentConfig{}).Run(nil, nil, nil)
		return out, lineAt(-1)
	}},
	"GRU.Forward": {`nabla: nn.GRU: "r": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewGRU(g, "r", 3, 2, nn.RecurrentConfig{}).Forward(nil), lineAt(0)
	}},
	"GRU.Run": {`nabla: nn.GRU: "r": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		out, _ := nn.NewGRU(g, "r", 3, 2, nn.RecurrentConfig{}).Run(nil, nil)
		return out, lineAt(-1)
	}},
	"RNNCell.Forward": {`nabla: nn.RNNCell: "c": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewRNNCell(g, "c", 3, 2, true, "tanh").Forward(nil), lineAt(0)
	}},
	"RNNCell.Step": {`nabla: nn.RNNCell: "c": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewRNNCell(g, "c", 3, 2, true, "tanh").Step(nil, nil), lineAt(0)
	}},
	"LSTMCell.Forward": {`nabla: nn.LSTMCell: "c": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewLSTMCell(g, "c", 3, 2, true).Forward(nil), lineAt(0)
	}},
	"LSTMCell.Step": {`nabla: nn.LSTMCell: "c": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		h, _ := nn.NewLSTMCell(g, "c", 3, 2, true).Step(nil, nil, nil)
		return h, lineAt(-1)
	}},
	"GRUCell.Forward": {`nabla: nn.GRUCell: "c": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewGRUCell(g, "c", 3, 2, true).Forward(nil), lineAt(0)
	}},
	"GRUCell.Step": {`nabla: nn.GRUCell: "c": the input is nil`, func(g *graph.Graph) (*graph.Node, string) {
		return nn.NewGRUCell(g, "c", 3, 2, true).Step(nil, nil), lineAt(0)
	}},
}

// Every module method given a nil input names the module as nn's other
// errors do, "nn.Linear: "fc": …" (most said "nn.Linear.Forward: got a
// nil node for an input", from graph.Poisoned), and the caller's line.
// The table holds every such method of the package (parsed from its
// files), so that a new module is held to it.
func TestModuleErrorsNameTheModule(t *testing.T) {
	for _, m := range moduleMethodsInPackage(t) {
		if _, ok := moduleMethods[m]; !ok {
			t.Errorf("%s builds from an input but is not in moduleMethods: add it", m)
		}
	}
	for name, c := range moduleMethods {
		t.Run(name, func(t *testing.T) {
			out, line := c.call(graph.New())
			if want := c.want + " at " + line; out.Err() == nil || out.Err().Error() != want {
				t.Fatalf("got  %v\nwant %s", out.Err(), want)
			}
		})
	}
}

// moduleMethodsInPackage is "Type.Method" for every exported method of
// an exported type of package nn named Forward, Step, Attend or Run.
func moduleMethodsInPackage(t *testing.T) []string {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !slices.Contains([]string{"Forward", "Step", "Attend", "Run"}, fd.Name.Name) {
				continue
			}
			typ := fd.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok && id.IsExported() && len(fd.Type.Params.List) > 0 {
				if sel, ok := fd.Type.Params.List[0].Type.(*ast.StarExpr); ok && exprIs(sel.X, "graph", "Node") {
					found = append(found, id.Name+"."+fd.Name.Name)
				}
			}
		}
	}
	if len(found) < 20 {
		t.Fatalf("found only %d module methods: is the test in nn's folder?", len(found))
	}
	return found
}

// exprIs reports whether e is pkg.name.
func exprIs(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg && sel.Sel.Name == name
}

// A recurrent module made on a graph that already holds an error is
// poisoned with it; its Forward and Run return that error (they
// panicked: no layer was built, and they read the first).
func TestRecurrentOnAFailedGraph(t *testing.T) {
	earlier := errors.New("an earlier mistake")
	for name, make := range map[string]func(g *graph.Graph) nn.Module{
		"RNN":  func(g *graph.Graph) nn.Module { return nn.NewRNN(g, "r", 3, 2, nn.RecurrentConfig{}) },
		"LSTM": func(g *graph.Graph) nn.Module { return nn.NewLSTM(g, "l", 3, 2, nn.RecurrentConfig{Layers: 2}) },
		"GRU": func(g *graph.Graph) nn.Module {
			return nn.NewGRU(g, "r", 3, 2, nn.RecurrentConfig{Bidirectional: true})
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", graph.Float64, 4, 2, 3)
			g.Fail(earlier)
			m := make(g).(interface{ Forward(*graph.Node) *graph.Node })
			for _, in := range []*graph.Node{x, nil} {
				if out := m.Forward(in); !errors.Is(out.Err(), earlier) {
					t.Fatalf("Forward(%v): got %v, want the graph's error", in, out.Err())
				}
			}
		})
	}
}

// zeroModules is a zero value of every module type of package nn (by
// the types moduleMethodsInPackage finds), and the constructor its error
// names; "" where a zero value is a module that works (an activation, a
// Dropout in evaluation, a Sequential of no layers, a pooling whose
// options the op checks).
var zeroModules = map[string]struct {
	zero        nn.Module
	constructor string
}{
	"Linear":             {&nn.Linear{}, "NewLinear"},
	"Conv2d":             {&nn.Conv2d{}, "NewConv2d"},
	"ConvTranspose2d":    {&nn.ConvTranspose2d{}, "NewConvTranspose2d"},
	"Embedding":          {&nn.Embedding{}, "NewEmbedding"},
	"LayerNorm":          {&nn.LayerNorm{}, "NewLayerNorm"},
	"BatchNorm":          {&nn.BatchNorm{}, "NewBatchNorm1d or nn.NewBatchNorm2d"},
	"MultiheadAttention": {&nn.MultiheadAttention{}, "NewMultiheadAttention"},
	"TransformerBlock":   {&nn.TransformerBlock{}, "NewTransformerBlock"},
	"RNN":                {&nn.RNN{}, "NewRNN"},
	"LSTM":               {&nn.LSTM{}, "NewLSTM"},
	"GRU":                {&nn.GRU{}, "NewGRU"},
	"RNNCell":            {&nn.RNNCell{}, "NewRNNCell"},
	"LSTMCell":           {&nn.LSTMCell{}, "NewLSTMCell"},
	"GRUCell":            {&nn.GRUCell{}, "NewGRUCell"},
	"Dropout":            {&nn.Dropout{}, ""},
	"Sequential":         {&nn.Sequential{}, ""},
	"Tanh":               {nn.Tanh{}, ""},
	"ReLU":               {nn.ReLU{}, ""},
	"Sigmoid":            {nn.Sigmoid{}, ""},
	"SiLU":               {nn.SiLU{}, ""},
	"GELU":               {nn.GELU{}, ""},
	"Flatten":            {nn.Flatten{}, ""},
	"MaxPool2d":          {nn.MaxPool2d{}, ""},
	"AvgPool2d":          {nn.AvgPool2d{}, ""},
}

// A zero module (a struct literal, nn.LSTM{}) is an error naming its
// constructor, from Forward, printed and listed without a panic (a zero
// RNN, LSTM or GRU panicked; a zero Linear named LinearFunction's nil
// input, a zero RNNCell "nn.: \"\": input … is not (N, 0)").
func TestZeroModulesAreErrors(t *testing.T) {
	for _, m := range moduleMethodsInPackage(t) {
		if typ, _, _ := strings.Cut(m, "."); zeroModules[typ].zero == nil {
			t.Errorf("module %s is not in zeroModules: add it", typ)
		}
	}
	for name, c := range zeroModules {
		if c.constructor == "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", graph.Float64, 2, 3, 4)
			out, line := c.zero.(interface{ Forward(*graph.Node) *graph.Node }).Forward(x), lineAt(0)
			want := "nabla: nn." + name + ": the module is nil or zero: make it with nn." + c.constructor + " at " + line
			if out.Err() == nil || out.Err().Error() != want {
				t.Fatalf("got  %v\nwant %s", out.Err(), want)
			}
			_ = fmt.Sprint(c.zero)
			nn.NamedParameters(c.zero)
		})
	}
}
