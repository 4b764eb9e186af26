package distributions

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// The reparameterised derivative of a standard gamma draw, dx/dα, agrees
// with mpmath's ∂Q/∂α / p at 40 digits (testdata/gen_fixtures.py) to 1e-9
// relative, from α = 0.05 to 150 and in both tails; PyTorch's
// _standard_gamma_grad, an approximation, agrees to 1e-3.
func TestGammaSampleGradAgainstMpmath(t *testing.T) {
	raw, err := os.ReadFile("testdata/fixtures.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		G struct {
			Alpha, X, Exact, Torch []float64
		} `json:"gamma_grad"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.G.Exact) < 9 {
		t.Fatalf("fixtures: %d points, want 9", len(f.G.Exact))
	}
	for i, a := range f.G.Alpha {
		got := gammaSampleGrad(f.G.X[i], a)
		if e := f.G.Exact[i]; math.Abs(got-e) > 1e-9*math.Abs(e) {
			t.Errorf("α=%v x=%v: got %.17g, want %.17g", a, f.G.X[i], got, e)
		}
		if w := f.G.Torch[i]; math.Abs(got-w) > 1e-3*math.Abs(w) {
			t.Errorf("α=%v x=%v: got %.17g, PyTorch %.17g", a, f.G.X[i], got, w)
		}
	}
	for _, bad := range [][2]float64{{0, 1}, {1, 0}, {-1, 1}, {math.Inf(1), 1}} {
		if g := gammaSampleGrad(bad[0], bad[1]); !math.IsNaN(g) {
			t.Errorf("x=%v α=%v: got %v, want NaN", bad[0], bad[1], g)
		}
	}
}

// The reparameterised draw differentiates twice: at the points of the
// first derivative's fixtures, d²x/dα² of the graph (the gradient of the
// gradient, through the draw moving with α) agrees with mpmath's implicit
// second derivative at 40 digits (testdata/gamma_grad2.py) to 1e-6
// relative, and the first derivative to 1e-9; the third derivative is an
// error.
func TestGammaSampleSecondDerivativeAgainstMpmath(t *testing.T) {
	raw, err := os.ReadFile("testdata/gamma_grad2.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Alpha, X, First, Second []float64 }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	n := len(f.Alpha)
	if n < 9 {
		t.Fatalf("fixtures: %d points, want 9", n)
	}
	g := graph.New()
	xs, as := graph.NewDense(graph.Float64, n), graph.NewDense(graph.Float64, n)
	for i := range n {
		graph.SetFloat(xs, i, f.X[i])
		graph.SetFloat(as, i, f.Alpha[i])
	}
	alpha := g.Param("alpha", as)
	x := graph.Apply(gammaRSampleOp{}, g.Const(xs), alpha)
	first, err := compile.Grad(ops.Sum(x), alpha)
	if err != nil {
		t.Fatal(err)
	}
	second, err := compile.Grad(ops.Sum(first[0]), alpha)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := compile.Compile([]*graph.Node{first[0], second[0]})
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(nil); err != nil {
		t.Fatal(err)
	}
	var v [2][]float64
	for k, o := range []*graph.Node{first[0], second[0]} {
		d, err := m.Value(o)
		if err != nil {
			t.Fatal(err)
		}
		v[k] = graph.Float64s(d)
	}
	worst := 0.0
	for i := range n {
		worst = max(worst, math.Abs(v[1][i]-f.Second[i])/math.Abs(f.Second[i]))
		if e := f.First[i]; math.Abs(v[0][i]-e) > 1e-9*math.Abs(e) {
			t.Errorf("α=%v x=%v: dx/dα = %.17g, want %.17g", f.Alpha[i], f.X[i], v[0][i], e)
		}
		if e := f.Second[i]; math.Abs(v[1][i]-e) > 1e-6*math.Abs(e) {
			t.Errorf("α=%v x=%v: d²x/dα² = %.17g, want %.17g", f.Alpha[i], f.X[i], v[1][i], e)
		}
	}
	t.Logf("d²x/dα²: largest relative difference %.2g", worst)
	_, err = compile.Grad(ops.Sum(second[0]), alpha)
	if want := "the reparameterised gradient of a gamma draw differentiates twice"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("third derivative: got %v, want %q", err, want)
	}
}
