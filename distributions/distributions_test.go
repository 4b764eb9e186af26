package distributions_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/distributions"
	"github.com/nabla-go/nabla/graph"
)

// tensorJSON is a tensor in the fixtures: its values, flattened, and shape.
type tensorJSON struct {
	Values []float64 `json:"values"`
	Shape  []int     `json:"shape"`
}

// UnmarshalJSON reads the values, infinities written as "inf" and "-inf".
func (t *tensorJSON) UnmarshalJSON(b []byte) error {
	var raw struct {
		Values []any `json:"values"`
		Shape  []int `json:"shape"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	t.Shape, t.Values = raw.Shape, make([]float64, len(raw.Values))
	for i, v := range raw.Values {
		switch v := v.(type) {
		case float64:
			t.Values[i] = v
		case string:
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return err
			}
			t.Values[i] = f
		default:
			return fmt.Errorf("value %v is not a number", v)
		}
	}
	return nil
}

type fixtures struct {
	Cases []struct {
		Family   string                `json:"family"`
		Params   map[string]tensorJSON `json:"params"`
		X        tensorJSON            `json:"x"`
		LogProb  tensorJSON            `json:"log_prob"`
		Entropy  tensorJSON            `json:"entropy"`
		Mean     *tensorJSON           `json:"mean"`
		Variance *tensorJSON           `json:"variance"`
	} `json:"cases"`
	KL []struct {
		Family  string                `json:"family"`
		QFamily string                `json:"q_family"` // Family when empty
		P       map[string]tensorJSON `json:"p"`
		Q       map[string]tensorJSON `json:"q"`
		KL      tensorJSON            `json:"kl"`
	} `json:"kl"`
	Special struct {
		X         tensorJSON   `json:"x"`
		Lgamma    tensorJSON   `json:"lgamma"`
		Digamma   tensorJSON   `json:"digamma"`
		Polygamma []tensorJSON `json:"polygamma"`
	} `json:"special"`
}

// readFixtures reads testdata/fixtures.json.
func readFixtures(t *testing.T) fixtures {
	raw, err := os.ReadFile("testdata/fixtures.json")
	if err != nil {
		t.Fatal(err)
	}
	var f fixtures
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// makers builds each family from its parameters, by PyTorch's names.
var makers = map[string]func(p map[string]*graph.Node) distributions.Distribution{
	"Normal": func(p map[string]*graph.Node) distributions.Distribution {
		return distributions.NewNormal(p["loc"], p["scale"])
	},
	"Laplace": func(p map[string]*graph.Node) distributions.Distribution {
		return distributions.NewLaplace(p["loc"], p["scale"])
	},
	"Uniform": func(p map[string]*graph.Node) distributions.Distribution {
		return distributions.NewUniform(p["low"], p["high"])
	},
	"Bernoulli": func(p map[string]*graph.Node) distributions.Distribution {
		return distributions.NewBernoulli(p["logits"])
	},
	"Categorical": func(p map[string]*graph.Node) distributions.Distribution {
		return distributions.NewCategorical(p["logits"])
	},
	"Gamma": func(p map[string]*graph.Node) distributions.Distribution {
		return distributions.NewGamma(p["concentration"], p["rate"])
	},
	"Beta": func(p map[string]*graph.Node) distributions.Distribution {
		return distributions.NewBeta(p["concentration1"], p["concentration0"])
	},
	"Dirichlet": func(p map[string]*graph.Node) distributions.Distribution {
		return distributions.NewDirichlet(p["concentration"])
	},
	"StudentT": func(p map[string]*graph.Node) distributions.Distribution {
		return distributions.NewStudentT(p["df"], p["loc"], p["scale"])
	},
	"MultivariateNormal": func(p map[string]*graph.Node) distributions.Distribution {
		return distributions.NewMultivariateNormal(p["loc"], p["scale_tril"])
	},
}

func nodes(t *testing.T, g *graph.Graph, params map[string]tensorJSON) map[string]*graph.Node {
	out := map[string]*graph.Node{}
	for k, v := range params {
		out[k] = constant(t, g, graph.Float64, v.Values, v.Shape...)
	}
	return out
}

// closeTo checks got against want to 1e-12, relative to max(1, |want|);
// an infinite want must be got exactly.
func closeTo(t *testing.T, what string, got []float64, want tensorJSON) {
	t.Helper()
	if len(got) != len(want.Values) {
		t.Errorf("%s: got %d values, want %d", what, len(got), len(want.Values))
		return
	}
	for i, w := range want.Values {
		if math.IsInf(w, 0) && got[i] != w || math.Abs(got[i]-w) > 1e-12*max(1, math.Abs(w)) {
			t.Errorf("%s[%d]: got %.17g, want %.17g", what, i, got[i], w)
		}
	}
}

// LogProb, Entropy, Mean, Variance and KL agree with torch.distributions
// (float64, fixtures written by testdata/gen_fixtures.py) to 1e-12.
func TestAgainstPyTorch(t *testing.T) {
	f := readFixtures(t)
	if len(f.Cases) < 13 || len(f.KL) < 26 {
		t.Fatalf("fixtures: %d cases and %d divergences, want 13 and 26", len(f.Cases), len(f.KL))
	}
	for i, c := range f.Cases {
		g := graph.New()
		d := makers[c.Family](nodes(t, g, c.Params))
		outs := []*graph.Node{d.LogProb(constant(t, g, graph.Float64, c.X.Values, c.X.Shape...)), d.Entropy()}
		if c.Mean != nil {
			outs = append(outs, d.Mean(), d.Variance())
		}
		vals := run(t, nil, outs...)
		name := fmt.Sprintf("case %d (%s)", i, c.Family)
		closeTo(t, name+" LogProb", vals[0], c.LogProb)
		closeTo(t, name+" Entropy", vals[1], c.Entropy)
		if c.Mean != nil {
			closeTo(t, name+" Mean", vals[2], *c.Mean)
			closeTo(t, name+" Variance", vals[3], *c.Variance)
		}
	}
	for i, c := range f.KL {
		g := graph.New()
		p := makers[c.Family](nodes(t, g, c.P))
		qf := c.QFamily
		if qf == "" {
			qf = c.Family
		}
		q := makers[qf](nodes(t, g, c.Q))
		closeTo(t, fmt.Sprintf("KL %d (%s‖%s)", i, c.Family, qf), run(t, nil, distributions.KL(p, q))[0], c.KL)
	}
}

// Lgamma and Digamma agree with torch.lgamma and torch.digamma (float64),
// and Polygamma of orders 0 to 3 with mpmath's (at 30 digits), to 1e-12
// relative to max(1, |want|), from 10⁻³ to 10⁴ and at negative points.
func TestSpecialFunctionsAgainstPyTorch(t *testing.T) {
	f := readFixtures(t)
	if len(f.Special.Polygamma) != 4 {
		t.Fatalf("fixtures: %d polygamma orders, want 4", len(f.Special.Polygamma))
	}
	g := graph.New()
	x := constant(t, g, graph.Float64, f.Special.X.Values, f.Special.X.Shape...)
	outs := []*graph.Node{distributions.Lgamma(x)}
	for n := range f.Special.Polygamma {
		outs = append(outs, distributions.Polygamma(n, x))
	}
	vals := run(t, nil, outs...)
	closeTo(t, "Lgamma", vals[0], f.Special.Lgamma)
	closeTo(t, "Digamma", vals[1], f.Special.Digamma)
	for n, want := range f.Special.Polygamma {
		closeTo(t, fmt.Sprintf("Polygamma(%d)", n), vals[n+1], want)
	}
}

// The log-densities match hand formulas at points the fixtures leave out:
// Uniform outside its support, a Bernoulli with large logits, and a float32
// Normal; Categorical's Mean is NaN.
func TestHandFormulas(t *testing.T) {
	g := graph.New()
	c := func(vals ...float64) *graph.Node { return constant(t, g, graph.Float64, vals, len(vals)) }
	u := distributions.NewUniform(c(0, 0), c(2, 2))
	b := distributions.NewBernoulli(c(800, -800))
	n32 := distributions.NewNormal(constant(t, g, graph.Float32, []float64{1}), constant(t, g, graph.Float32, []float64{2}))
	cat := distributions.NewCategorical(constant(t, g, graph.Float64, []float64{0, 0}, 1, 2))
	vals := run(t, nil, u.LogProb(c(-0.5, 2)), u.LogProb(c(0, 1.5)), b.LogProb(c(0, 0)),
		n32.LogProb(constant(t, g, graph.Float32, []float64{2})), cat.Mean())
	if !math.IsInf(vals[0][0], -1) || !math.IsInf(vals[0][1], -1) {
		t.Errorf("Uniform outside [0, 2): got %v, want -Inf", vals[0])
	}
	if want := -math.Ln2; vals[1][0] != want || vals[1][1] != want {
		t.Errorf("Uniform inside: got %v, want %v", vals[1], want)
	}
	if vals[2][0] != -800 || vals[2][1] != 0 {
		t.Errorf("Bernoulli logits ±800 at 0: got %v, want [-800 0]", vals[2])
	}
	// log N(2; 1, 2²) = −1/8 − log 2 − ½ log 2π.
	if want := -0.125 - math.Ln2 - 0.5*math.Log(2*math.Pi); math.Abs(vals[3][0]-want) > 1e-6 {
		t.Errorf("float32 Normal: got %v, want %v", vals[3][0], want)
	}
	if !math.IsNaN(vals[4][0]) {
		t.Errorf("Categorical mean: got %v, want NaN", vals[4])
	}
}

// Mistakes give sticky errors naming the function and the caller's line.
func TestErrors(t *testing.T) {
	g := graph.New()
	vec := func(n int) *graph.Node { return g.Const(graph.NewDense(graph.Float64, n)) }
	cases := []struct {
		build func() *graph.Node
		want  string
	}{
		{func() *graph.Node { return distributions.NewNormal(vec(2), vec(3)).Mean() },
			"nabla: distributions.NewNormal: the shapes of loc, scale, (2) and (3), do not broadcast together at distributions_test.go:"},
		{func() *graph.Node { return distributions.NewNormal(vec(2), nil).Entropy() },
			"nabla: distributions.NewNormal: scale is nil at distributions_test.go:"},
		{func() *graph.Node {
			return distributions.NewLaplace(vec(2), g.Const(graph.NewDense(graph.Float32, 2))).Mean()
		}, "nabla: distributions.NewLaplace: scale is float32(2) but loc is float64(2): the dtypes differ at distributions_test.go:"},
		{func() *graph.Node { return distributions.NewCategorical(g.Scalar(1, graph.Float64)).Entropy() },
			"nabla: distributions.NewCategorical: logits float64() has no classes: want a last axis of size ≥ 1 at distributions_test.go:"},
		{func() *graph.Node { return distributions.NewNormal(vec(2), vec(2)).LogProb(vec(3)) },
			"nabla: distributions.Normal.LogProb: the value's shape (3) does not broadcast with the batch shape (2) at distributions_test.go:"},
		{func() *graph.Node { return distributions.Normal{}.Sample(nil) },
			"nabla: distributions.Normal: the distribution is a zero value: make it with NewNormal at distributions_test.go:"},
		{func() *graph.Node {
			return distributions.KL(distributions.NewNormal(vec(2), vec(2)), distributions.NewBernoulli(vec(2)))
		}, "nabla: distributions.KL: no divergence is registered for distributions.Normal and distributions.Bernoulli at distributions_test.go:"},
		{func() *graph.Node {
			return distributions.KL(distributions.NewCategorical(vec(2)), distributions.NewCategorical(vec(3)))
		}, "nabla: distributions.KL: p has 2 classes, q 3 at distributions_test.go:"},
		{func() *graph.Node {
			return distributions.NewMultivariateNormal(vec(2), g.Const(graph.NewDense(graph.Float64, 3, 3))).Mean()
		}, "nabla: distributions.NewMultivariateNormal: scale_tril has shape (3,3): want (…, 2, 2) for loc (2) at distributions_test.go:"},
		{func() *graph.Node {
			return distributions.NewMultivariateNormal(g.Const(graph.NewDense(graph.Float64, 3, 2)), g.Const(graph.NewDense(graph.Float64, 2, 2, 2))).Mean()
		}, "nabla: distributions.NewMultivariateNormal: the batch shapes of loc (3,2) and scale_tril (2,2,2) do not broadcast together at distributions_test.go:"},
		{func() *graph.Node { return distributions.NewDirichlet(g.Scalar(1, graph.Float64)).Entropy() },
			"nabla: distributions.NewDirichlet: concentration float64() has no categories: want a last axis of size ≥ 1 at distributions_test.go:"},
		{func() *graph.Node { return distributions.NewDirichlet(vec(3)).LogProb(vec(2)) },
			"nabla: distributions.Dirichlet.LogProb: the value's shape (2) does not end in the 3 categories at distributions_test.go:"},
		{func() *graph.Node {
			return distributions.KL(distributions.NewDirichlet(vec(2)), distributions.NewDirichlet(vec(3)))
		}, "nabla: distributions.KL: p has 2 categories, q 3 at distributions_test.go:"},
		{func() *graph.Node {
			return distributions.KL(distributions.NewStudentT(vec(2), vec(2), vec(2)), distributions.NewStudentT(vec(2), vec(2), vec(2)))
		}, "nabla: distributions.KL: no divergence is registered for distributions.StudentT and distributions.StudentT at distributions_test.go:"},
		{func() *graph.Node { return distributions.Polygamma(-1, vec(2)) },
			"nabla: distributions.Polygamma: order -1 is negative at distributions_test.go:"},
		{func() *graph.Node { return distributions.NewBernoulli(vec(2)).Sample(nil) },
			"nabla: Generator: the generator is nil: make one with ops.NewGenerator at "},
	}
	for i, c := range cases {
		g = graph.New()
		n := c.build()
		if graph.Poisoned(n) == nil || !strings.Contains(n.Err().Error(), c.want) {
			t.Errorf("case %d: got %v, want %q", i, n.Err(), c.want)
		}
	}
}

// StudentT's Mean is NaN for ν ≤ 1 and its Variance +∞ for 1 < ν ≤ 2 and
// NaN for ν ≤ 1, as PyTorch's (the fixtures hold no NaN).
func TestStudentTUndefinedMoments(t *testing.T) {
	g := graph.New()
	c := func(vals ...float64) *graph.Node { return constant(t, g, graph.Float64, vals, len(vals)) }
	d := distributions.NewStudentT(c(0.5, 1.5, 3), c(2, 2, 2), c(0.5, 0.5, 0.5))
	vals := run(t, nil, d.Mean(), d.Variance())
	if !math.IsNaN(vals[0][0]) || vals[0][1] != 2 || vals[0][2] != 2 {
		t.Errorf("Mean: got %v, want [NaN 2 2]", vals[0])
	}
	if !math.IsNaN(vals[1][0]) || !math.IsInf(vals[1][1], 1) || vals[1][2] != 0.75 {
		t.Errorf("Variance: got %v, want [NaN +Inf 0.75]", vals[1])
	}
}

// Polygamma of high orders agrees with mpmath's psi(n, x) (at 40 digits)
// to 1e-12: past order 170, where n! overflows a float64, and where the
// powers 1/x^(n+1) fall below the normal floats, the terms are summed in
// logarithms. The values were NaN (orders 160 to 200 at x = 5) or 0
// (orders 110 on at x = 1000); they overflow and underflow only where
// ψ⁽ⁿ⁾(x) does.
func TestPolygammaHighOrders(t *testing.T) {
	cases := []struct {
		n    int
		x    float64
		want float64
	}{
		{50, 0.3, -1.4121826834802908232e+91},
		{100, 1000, -9.8071062030352940874e-145},
		{110, 1000, -1.5247406776133539883e-154},
		{120, 2.5, -4.7277314349816162081e+150},
		{130, 1e4, -5.0069090962225826461e-303},
		{150, 200, -3.7942152199759049376e-85},
		{160, 5, -1.3781152627132672065e+172},
		{171, 1.5, 6.3985497001931782039e+278},
		{172, 5, -2.5556171976853749038e+190},
		{200, 1000, -4.3508192705971018437e-228},
		{300, 50, -1.2501246564155922055e+103},
		{200, 0.3, math.Inf(-1)},  // −9.9e479
		{1000, 0.5, math.Inf(-1)}, // −8.6e2868
		{1000, 3000, 0},           // −3.6e−913
		{200, -2.5, math.Inf(-1)}, // −3.2e339
		{201, -2.5, math.Inf(1)},  // 2.0e438
		{150, -2.5, -1.4693095234403323674e+236},
		{121, -3.3, 5.0047932549467625512e+264},
		{5, 1e4, 2.40060005999999944e-19},
	}
	g := graph.New()
	var outs []*graph.Node
	for _, c := range cases {
		outs = append(outs, distributions.Polygamma(c.n, constant(t, g, graph.Float64, []float64{c.x})))
	}
	for i, v := range run(t, nil, outs...) {
		c, got := cases[i], v[0]
		if math.IsInf(c.want, 0) || c.want == 0 {
			if got != c.want {
				t.Errorf("Polygamma(%d, %v) = %v, want %v", c.n, c.x, got, c.want)
			}
			continue
		}
		if math.Abs(got-c.want) > 1e-12*math.Abs(c.want) {
			t.Errorf("Polygamma(%d, %v) = %v, want %v", c.n, c.x, got, c.want)
		}
	}
}
