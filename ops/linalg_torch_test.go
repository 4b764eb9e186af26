package ops_test

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// torchTensor is a float64 tensor of testdata/linalg_torch.json.
type torchTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

// torchLinalgCase is one case of testdata/linalg_torch.json, written by
// linalg_torch.py: an op's inputs, and torch.linalg's outputs, gradients
// of a projection of them and a Hessian–vector product.
type torchLinalgCase struct {
	Name    string         `json:"name"`
	Op      string         `json:"op"`
	Options map[string]any `json:"options"`
	Sym     bool           `json:"sym"`
	Inputs  []torchTensor  `json:"inputs"`
	Outputs []torchTensor  `json:"outputs"`
	Grads   []torchTensor  `json:"grads"`
	HVP     torchTensor    `json:"hvp"`
}

// linalgOps builds each op of the fixtures by the name the script gives.
var linalgOps = map[string]func(c torchLinalgCase, in []*graph.Node) []*graph.Node{
	"Cholesky": func(_ torchLinalgCase, in []*graph.Node) []*graph.Node { return []*graph.Node{ops.Cholesky(in[0])} },
	"TriangularSolve": func(c torchLinalgCase, in []*graph.Node) []*graph.Node {
		o := ops.TriangularOptions{Upper: c.flag("Upper"), Right: c.flag("Right"), Transpose: c.flag("Transpose"),
			UnitDiagonal: c.flag("UnitDiagonal")}
		return []*graph.Node{ops.TriangularSolve(in[0], in[1], o)}
	},
	"CholeskySolve": func(_ torchLinalgCase, in []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.CholeskySolve(in[0], in[1])}
	},
	"Solve": func(_ torchLinalgCase, in []*graph.Node) []*graph.Node { return []*graph.Node{ops.Solve(in[0], in[1])} },
	"SolveOp": func(c torchLinalgCase, in []*graph.Node) []*graph.Node {
		return []*graph.Node{graph.Apply(ops.SolveOp(c.flag("Transpose"), c.flag("Right")), in[0], in[1])}
	},
	"Inverse": func(_ torchLinalgCase, in []*graph.Node) []*graph.Node { return []*graph.Node{ops.Inverse(in[0])} },
	"Det":     func(_ torchLinalgCase, in []*graph.Node) []*graph.Node { return []*graph.Node{ops.Det(in[0])} },
	"SlogDet": func(_ torchLinalgCase, in []*graph.Node) []*graph.Node {
		sign, logAbs := ops.SlogDet(in[0])
		return []*graph.Node{sign, logAbs}
	},
	"LogDet": func(_ torchLinalgCase, in []*graph.Node) []*graph.Node { return []*graph.Node{ops.LogDet(in[0])} },
	"QR": func(_ torchLinalgCase, in []*graph.Node) []*graph.Node {
		q, r := ops.QR(in[0])
		return []*graph.Node{q, r}
	},
	"Eigh": func(_ torchLinalgCase, in []*graph.Node) []*graph.Node {
		values, vectors := ops.Eigh(in[0])
		return []*graph.Node{values, vectors}
	},
	"SVD": func(_ torchLinalgCase, in []*graph.Node) []*graph.Node {
		u, s, vh := ops.SVD(in[0])
		return []*graph.Node{u, s, vh}
	},
	"MatrixExp": func(_ torchLinalgCase, in []*graph.Node) []*graph.Node { return []*graph.Node{ops.MatrixExp(in[0])} },
	"Tril": func(c torchLinalgCase, in []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Tril(in[0], c.int("K"))}
	},
	"Triu": func(c torchLinalgCase, in []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Triu(in[0], c.int("K"))}
	},
	"Diagonal":  func(_ torchLinalgCase, in []*graph.Node) []*graph.Node { return []*graph.Node{ops.Diagonal(in[0])} },
	"DiagEmbed": func(_ torchLinalgCase, in []*graph.Node) []*graph.Node { return []*graph.Node{ops.DiagEmbed(in[0])} },
	"Trace":     func(_ torchLinalgCase, in []*graph.Node) []*graph.Node { return []*graph.Node{ops.Trace(in[0])} },
}

// flag is a boolean option, false where absent.
func (c torchLinalgCase) flag(name string) bool { return c.Options[name] == true }

// int is an integer option (JSON numbers decode as float64), 0 where absent.
func (c torchLinalgCase) int(name string) int {
	k, _ := c.Options[name].(float64)
	return int(k)
}

// TestLinalgAgainstTorch compares every linear algebra op, batched and
// not, with torch.linalg (testdata/linalg_torch.json): its outputs, the
// gradients of the projection L = Σᵢ Σₖ wᵢₖ·outᵢₖ with respect to every
// input, and the Hessian–vector product of L with respect to the first
// input, all to 1e-10 relative to the largest element of torch's value.
// The inputs are small and well conditioned (condition numbers below
// about 10, eigenvalues and singular values well apart), so both sides
// are accurate to a few units in the last place times the condition
// number; 1e-10 leaves room for that and catches any wrong formula.
func TestLinalgAgainstTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/linalg_torch.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []torchLinalgCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.Op] = true
		t.Run(c.Name, func(t *testing.T) { checkTorchCase(t, c) })
	}
	for op := range linalgOps {
		if !seen[op] {
			t.Errorf("no case for %s in linalg_torch.json", op)
		}
	}
}

func checkTorchCase(t *testing.T, c torchLinalgCase) {
	build, ok := linalgOps[c.Op]
	if !ok {
		t.Fatalf("unknown op %q", c.Op)
	}
	g := graph.New()
	in := make([]*graph.Node, len(c.Inputs))
	for i, x := range c.Inputs {
		in[i] = g.Param("x"+string(rune('0'+i)), torchDense(t, x))
	}
	outs := build(c, in)
	var loss *graph.Node
	for i, y := range outs {
		w := pattern(y.Type().Size(), func(k int) float64 { return math.Sin(0.37*float64(k) + 0.1*float64(i+1)) })
		term := ops.Sum(ops.Mul(g.Const(torchDense(t, torchTensor{y.Shape(), w})), y))
		if loss == nil {
			loss = term
		} else {
			loss = ops.Add(loss, term)
		}
	}
	grads, err := compile.Grad(loss, in...)
	if err != nil {
		t.Fatal(err)
	}
	x0 := c.Inputs[0]
	v := pattern(len(x0.Data), func(k int) float64 { return math.Cos(0.53*float64(k) + 0.2) })
	if c.Sym {
		symmetrise(v, x0.Shape)
	}
	hvp, err := compile.HVP(loss, in[0], g.Const(torchDense(t, torchTensor{x0.Shape, v})))
	if err != nil {
		t.Fatal(err)
	}
	all := append(append(append([]*graph.Node(nil), outs...), grads...), hvp)
	want := append(append(append([]torchTensor(nil), c.Outputs...), c.Grads...), c.HVP)
	if len(all) != len(want) {
		t.Fatalf("%d values to compare, the fixture has %d", len(all), len(want))
	}
	p, err := compile.Compile(all)
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(nil); err != nil {
		t.Fatal(err)
	}
	for i, n := range all {
		what := "output"
		switch {
		case i == len(all)-1:
			what = "Hessian–vector product"
		case i >= len(outs):
			what = "gradient"
		}
		got, err := m.Value(n)
		if err != nil {
			t.Fatal(err)
		}
		agreeTorch(t, what, graph.Float64s(got), got.Shape(), want[i])
	}
}

// agreeTorch fails t where got differs from torch's value by more than
// 1e-10 relative to its largest element (absolute where it is zero).
func agreeTorch(t *testing.T, what string, got []float64, shape tensor.Shape, want torchTensor) {
	t.Helper()
	if graph.ShapeSize(shape) != graph.ShapeSize(want.Shape) || len(got) != len(want.Data) {
		t.Errorf("%s: shape %v, torch's %v", what, shape, want.Shape)
		return
	}
	scale := 0.0
	for _, w := range want.Data {
		scale = math.Max(scale, math.Abs(w))
	}
	if scale == 0 {
		scale = 1
	}
	for k, w := range want.Data {
		if !(math.Abs(got[k]-w) <= 1e-10*scale) {
			t.Errorf("%s: element %d is %v, torch's %v (difference %.3g relative to %.3g)", what, k, got[k], w,
				math.Abs(got[k]-w)/scale, scale)
			return
		}
	}
}

func torchDense(t *testing.T, x torchTensor) *tensor.Dense {
	t.Helper()
	d, err := graph.FromFloat64s(graph.Float64, x.Data, x.Shape...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// pattern is f(0), …, f(n−1).
func pattern(n int, f func(k int) float64) []float64 {
	v := make([]float64, n)
	for k := range v {
		v[k] = f(k)
	}
	return v
}

// symmetrise replaces each matrix of v (its last two axes) by ½(V + Vᵀ),
// computed as torch computes (v + v.mT)/2.
func symmetrise(v []float64, shape []int) {
	n := shape[len(shape)-1]
	for m := 0; m < len(v); m += n * n {
		x := v[m : m+n*n]
		for i := range n {
			for j := range i {
				s := (x[i*n+j] + x[j*n+i]) / 2
				x[i*n+j], x[j*n+i] = s, s
			}
		}
	}
}
