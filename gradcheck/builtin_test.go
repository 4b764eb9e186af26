package gradcheck_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/optable"
	"github.com/nabla-go/nabla/ops"
)

// opCase is one row of the built-in op table (internal/testkit/optable).
type opCase = optable.Case

// builtinTable is the table of every built-in op.
func builtinTable() []opCase { return optable.Table() }

// checkCase runs a row through CheckOp, with the op taken from a node its
// builder built on a scratch graph: builders with non-tensor parameters
// (axes, shapes, constants) are checked through CheckOp like the others,
// with the op carrying the parameters the builder gave it.
func checkCase(c opCase, fast bool) error {
	if c.Composite { // first and second order, as CheckOp checks
		opts := gradcheck.Options{Inputs: c.Checked, Fast: fast, Eps: c.Eps}
		if err := gradcheck.Check(c.Build, c.Inputs, opts); err != nil {
			return err
		}
		return gradcheck.GradGradCheck(c.Build, c.Inputs, opts)
	}
	op, err := opOf(c)
	if err != nil {
		return err
	}
	return gradcheck.CheckOp(op, c.Inputs, gradcheck.Options{Inputs: c.Checked, Fast: fast, Eps: c.Eps})
}

// opOf builds the row on a scratch graph and returns the op of the node
// the builder returned, which must apply it to the inputs directly.
func opOf(c opCase) (graph.Op, error) {
	g := graph.New()
	xs := make([]*graph.Node, len(c.Inputs))
	for i, x := range c.Inputs {
		xs[i] = g.Input("x", x.Dtype(), x.Shape()...)
	}
	y := c.Build(xs)
	if err := g.Err(); err != nil {
		return nil, err
	}
	if y.Op() == nil || !slices.Equal(y.Inputs(), xs) {
		return nil, fmt.Errorf("%s does not apply one op to its inputs: give its row a check of its own", c.Builder)
	}
	return y.Op(), nil
}

// thirdOrder returns the scalar ⟨∇⟨w, f⟩, c⟩ of a row's gradient with
// respect to its checked inputs, with fixed w and c: GradGradCheck of it
// checks f's third derivatives.
// checkToThirdOrder checks each row's first and second derivatives
// (Check, GradGradCheck) and third (GradGradCheck of the gradient)
// against finite differences.
func checkToThirdOrder(t *testing.T, rows []opCase) {
	for _, c := range rows {
		t.Run(c.Variant, func(t *testing.T) {
			opts := gradcheck.Options{Inputs: c.Checked}
			if err := gradcheck.Check(c.Build, c.Inputs, opts); err != nil {
				t.Fatalf("first order: %v", err)
			}
			if err := gradcheck.GradGradCheck(c.Build, c.Inputs, opts); err != nil {
				t.Fatalf("second order: %v", err)
			}
			if err := gradcheck.GradGradCheck(thirdOrder(c), c.Inputs, opts); err != nil {
				t.Fatalf("third order: %v", err)
			}
		})
	}
}

func thirdOrder(c opCase) func(in []*graph.Node) *graph.Node {
	return func(in []*graph.Node) *graph.Node {
		g := in[0].Graph()
		y := c.Build(in)
		v := newValues(3)
		var wrt []*graph.Node
		for i, x := range in {
			if c.Checked == nil && graph.IsFloat(x.DType()) || slices.Contains(c.Checked, i) {
				wrt = append(wrt, x)
			}
		}
		grads, err := compile.GradWith(ops.Sum(ops.Mul(y, g.Const(v.Signed(y.Shape()...)))), wrt, compile.ZerosIfDisconnected())
		if err != nil {
			return g.Fail(err)
		}
		var s *graph.Node
		for _, gr := range grads {
			term := ops.Sum(ops.Mul(gr, g.Const(v.Signed(gr.Shape()...))))
			if s == nil {
				s = term
			} else {
				s = ops.Add(s, term)
			}
		}
		return s
	}
}

func TestBuiltinOps(t *testing.T) {
	for _, c := range builtinTable() {
		t.Run(c.Name(), func(t *testing.T) {
			err := checkCase(c, false)
			if c.StopsGradient {
				if err == nil {
					t.Fatalf("case %v: got no error, want a first-derivative mismatch (StopGradient has no gradient)", c.Name())
				}
				if e := asCheckError(t, err); e.Problem != gradcheck.FirstDerivative {
					t.Fatalf("case %v: got %v, want a first-derivative mismatch", c.Name(), err)
				}
			} else if err != nil {
				t.Fatalf("case %v: %v", c.Name(), err)
			}
			if c.NoGrad != "" {
				checkNoGradient(t, c)
			}
			// Third order wherever some input has a gradient: all inputs, or
			// the checked ones of a row whose other inputs have none.
			if !c.StopsGradient && (c.NoGrad == "" || len(c.Checked) > 0) {
				if err := gradcheck.GradGradCheck(thirdOrder(c), c.Inputs, gradcheck.Options{Inputs: c.Checked, Eps: c.Eps}); err != nil {
					t.Fatalf("case %v: third order: %v", c.Name(), err)
				}
			}
		})
	}
}

// checkNoGradient checks that the row's op returns no gradient for the
// inputs the table says have none, calling Backward directly.
func checkNoGradient(t *testing.T, c opCase) {
	t.Helper()
	g := graph.New()
	xs := make([]*graph.Node, len(c.Inputs))
	needs := make([]bool, len(c.Inputs))
	for i, x := range c.Inputs {
		xs[i] = g.Input("x", x.Dtype(), x.Shape()...)
		needs[i] = true
	}
	y := c.Build(xs)
	if c.Composite {
		// Ops of its own: no path of gradients reaches an input the
		// row names from the builder's output.
		for _, i := range c.NoGradInputs {
			if _, err := compile.Grad(ops.Sum(y), xs[i]); err == nil || !strings.Contains(err.Error(), "no path from the output reaches it") {
				t.Errorf("case %v: input %d: got %v, want an error saying no path reaches it (%s)", c.Name(), i, err, c.NoGrad)
			}
		}
		return
	}
	d, ok := y.Op().(graph.Differentiable)
	if !ok {
		t.Fatalf("case %v: op %s has no Backward", c.Name(), y.OpName())
	}
	grads := d.Backward(graph.NewGradContext(y, needs), g.Input("g", y.DType(), y.Shape()...))
	for _, i := range c.NoGradInputs {
		if i >= len(grads) || grads[i] != nil {
			t.Errorf("case %v: input %d: got a gradient, want none (%s)", c.Name(), i, c.NoGrad)
		}
	}
}

// TestEveryBuilderHasARow parses package ops and fails naming every
// exported function returning *graph.Node that the table does not cover
// (Root and FixedPoint have theirs in optable.RootTable, checked by
// TestRootRows): adding an op without a row fails this test.
func TestEveryBuilderHasARow(t *testing.T) {
	builders := opsBuilders(t)
	if len(builders) < 40 {
		t.Fatalf("found %d builders in package ops; the parse is broken", len(builders))
	}
	covered := map[string]bool{}
	for _, c := range slices.Concat(builtinTable(), optable.RootTable()) {
		covered[c.Builder] = true
	}
	for b := range notDifferentiable {
		covered[b] = true
	}
	var missing []string
	for _, b := range builders {
		if !covered[b] {
			missing = append(missing, b)
		}
		delete(covered, b)
	}
	if len(missing) > 0 {
		t.Errorf("builders of package ops with no row in builtinTable: %s", strings.Join(missing, ", "))
	}
	for b := range covered {
		t.Errorf("table row for %q, which is not a builder of package ops", b)
	}
}

// notDifferentiable are the builders of ops with no Backward, each with
// why: they have no row, and TestNotDifferentiableRefuseGrad checks that
// differentiating through them is an error naming the op, never a
// gradient that silently leaves them out.
var notDifferentiable = map[string]func(g *graph.Graph) *graph.Node{
	// An optimiser's step (nn.AdamConfig.Float32Moments): its outputs are
	// the next parameters and moments, as PyTorch's optimizer.step, whose
	// kernels are checked bit for bit against a scalar reference (vek
	// TestAdamM32, cuda TestAdamM32OnDevice).
	"AdamM32": func(g *graph.Graph) *graph.Node {
		s := func(x float64) *graph.Node { return g.Scalar(x, graph.Float64) }
		p1, _, _ := ops.AdamM32(g.Input("p", graph.Float64, 3), g.Input("g", graph.Float64, 3),
			g.Input("m", graph.Float32, 3), g.Input("v", graph.Float32, 3), s(0.1), s(1e-8), s(1), s(0), 0.9, 0.999, false)
		return p1
	},
}

// TestNotDifferentiableRefuseGrad: the gradient of a sum through a builder
// without Backward is an error naming the op.
func TestNotDifferentiableRefuseGrad(t *testing.T) {
	for name, build := range notDifferentiable {
		g := graph.New()
		y := build(g)
		p := g.Nodes()[0]
		_, err := compile.Grad(ops.Sum(ops.Add(y, p)), p)
		if err == nil || !strings.Contains(err.Error(), "op "+name+" is not differentiable") {
			t.Errorf("%s: got %v, want an error saying the op is not differentiable", name, err)
		}
	}
}

// opsBuilders lists the exported functions of package ops (test files
// aside) that return one *graph.Node or several (SlogDet's sign and log).
func opsBuilders(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "ops", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var names []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv == nil && fn.Name.IsExported() && returnsNode(fn.Type) {
				names = append(names, fn.Name.Name)
			}
		}
	}
	sort.Strings(names)
	return names
}

// returnsNode reports whether a function's results are all *graph.Node.
func returnsNode(ft *ast.FuncType) bool {
	if ft.Results == nil || len(ft.Results.List) == 0 {
		return false
	}
	for _, r := range ft.Results.List {
		star, ok := r.Type.(*ast.StarExpr)
		if !ok {
			return false
		}
		sel, ok := star.X.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "graph" || sel.Sel.Name != "Node" {
			return false
		}
	}
	return true
}
