package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// exampleByHand is Example's value, gradient and Hessian, derived by hand.
// With S = sum(x²):
//
//	f     = Σ sin(xᵢ)·xᵢ³ + log(1 + S)
//	∂ᵢf   = cos(xᵢ)·xᵢ³ + 3xᵢ²·sin(xᵢ) + 2xᵢ/(1 + S)
//	∂ᵢ∂ⱼf = δᵢⱼ·(−sin(xᵢ)·xᵢ³ + 6xᵢ²·cos(xᵢ) + 6xᵢ·sin(xᵢ) + 2/(1 + S)) − 4xᵢxⱼ/(1 + S)²
func exampleByHand(x []float64) Result {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	r := Result{X: x, F: math.Log1p(s)}
	for i, v := range x {
		sin, cos := math.Sincos(v)
		r.F += sin * v * v * v
		r.Grad = append(r.Grad, cos*v*v*v+3*v*v*sin+2*v/(1+s))
		row := make([]float64, len(x))
		for j, u := range x {
			row[j] = -4 * v * u / ((1 + s) * (1 + s))
		}
		row[i] += -sin*v*v*v + 6*v*v*cos + 6*v*sin + 2/(1+s)
		r.Hessian = append(r.Hessian, row)
	}
	return r
}

// rosenbrockByHand is Rosenbrock's value, gradient and Hessian at (x, y):
//
//	f = (1−x)² + 100(y−x²)²
//	∇f = (−2(1−x) − 400x(y−x²), 200(y−x²))
//	∇²f = [[2 − 400(y−x²) + 800x², −400x], [−400x, 200]]
func rosenbrockByHand(p []float64) Result {
	x, y := p[0], p[1]
	return Result{
		X:       p,
		F:       (1-x)*(1-x) + 100*(y-x*x)*(y-x*x),
		Grad:    []float64{-2*(1-x) - 400*x*(y-x*x), 200 * (y - x*x)},
		Hessian: [][]float64{{2 - 400*(y-x*x) + 800*x*x, -400 * x}, {-400 * x, 200}},
	}
}

// assertNear checks got against want, to tol relative to max(1, |want|).
func assertNear(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*math.Max(1, math.Abs(want[i]))) {
			t.Errorf("%s[%d]: got %.17g, want %.17g", what, i, got[i], want[i])
		}
	}
}

func assertResult(t *testing.T, name string, got, want Result, tol float64) {
	t.Helper()
	assertNear(t, name+": f", []float64{got.F}, []float64{want.F}, tol)
	assertNear(t, name+": grad", got.Grad, want.Grad, tol)
	if len(got.Hessian) != len(want.Hessian) {
		t.Fatalf("%s: Hessian has %d rows, want %d", name, len(got.Hessian), len(want.Hessian))
	}
	for i := range want.Hessian {
		assertNear(t, name+": Hessian row", got.Hessian[i], want.Hessian[i], tol)
	}
}

// points are the example's point and seeded random ones.
func points(dim, count int) [][]float64 {
	r := rand.New(rand.NewPCG(1, 1))
	ps := [][]float64{ExamplePoint}
	for range count {
		p := make([]float64, dim)
		for i := range p {
			p[i] = 4*r.Float64() - 2
		}
		ps = append(ps, p)
	}
	return ps
}

func TestEvaluateMatchesHandDerived(t *testing.T) {
	for _, x := range points(4, 5) {
		got, err := Evaluate(x)
		if err != nil {
			t.Fatal(err)
		}
		assertResult(t, "Example", got, exampleByHand(x), 1e-12)
	}
}

func TestRosenbrockMatchesHandDerived(t *testing.T) {
	e, err := NewEvaluator(2, Rosenbrock)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][]float64{{-1.2, 1}, {1, 1}, {0.3, -0.7}, {2, 3}} {
		got, err := e.At(p)
		if err != nil {
			t.Fatal(err)
		}
		assertResult(t, "Rosenbrock", got, rosenbrockByHand(p), 1e-12)
	}
}

// TestEvaluateMatchesFiniteDifferences checks the gradient against central
// differences of f, and the Hessian against central differences of the
// gradient, independently of the hand derivation.
func TestEvaluateMatchesFiniteDifferences(t *testing.T) {
	const h = 1e-5 // central differences: error O(h²) ≈ 1e-10 times f'''
	for _, x := range points(4, 3) {
		at, err := Evaluate(x)
		if err != nil {
			t.Fatal(err)
		}
		grad := make([]float64, len(x))
		hessian := make([][]float64, len(x))
		for j := range x {
			plus, minus := slices.Clone(x), slices.Clone(x)
			plus[j] += h
			minus[j] -= h
			rp, err := Evaluate(plus)
			if err != nil {
				t.Fatal(err)
			}
			rm, err := Evaluate(minus)
			if err != nil {
				t.Fatal(err)
			}
			grad[j] = (rp.F - rm.F) / (2 * h)
			hessian[j] = make([]float64, len(x))
			for i := range x {
				hessian[j][i] = (rp.Grad[i] - rm.Grad[i]) / (2 * h)
			}
		}
		assertNear(t, "grad against finite differences", at.Grad, grad, 1e-7)
		for i := range x {
			assertNear(t, "Hessian against finite differences", at.Hessian[i], hessian[i], 1e-7)
		}
	}
}

func TestJSONOutput(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d, stderr %q", code, stderr.String())
	}
	if strings.Count(stdout.String(), "\n") != 1 {
		t.Errorf("output %q is not one line", stdout.String())
	}
	dec := json.NewDecoder(&stdout)
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		t.Fatalf("output is not a JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Errorf("output has more than one JSON value: got %v after the object", err)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range fields {
			if !yield(k) {
				return
			}
		}
	})
	if want := []string{"f", "grad", "hessian", "x"}; !slices.Equal(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	var r Result
	for name, into := range map[string]any{"x": &r.X, "f": &r.F, "grad": &r.Grad, "hessian": &r.Hessian} {
		if err := json.Unmarshal(fields[name], into); err != nil {
			t.Fatalf("field %q: %v", name, err)
		}
	}
	if !slices.Equal(r.X, ExamplePoint) {
		t.Errorf("x: got %v, want %v", r.X, ExamplePoint)
	}
	if len(r.Hessian) != 4 {
		t.Fatalf("Hessian has %d rows, want 4", len(r.Hessian))
	}
	// JSON keeps float64s exactly, so the printed values are the computed ones.
	assertResult(t, "printed", r, exampleByHand(ExamplePoint), 1e-12)
}

func TestNewtonConverges(t *testing.T) {
	e, err := NewEvaluator(2, Rosenbrock)
	if err != nil {
		t.Fatal(err)
	}
	var iterates [][]float64
	x, err := Newton(e, rosenbrockStart, gradientTolerance, maxNewtonSteps, func(k int, r Result) {
		if k != len(iterates) {
			t.Errorf("iterate numbered %d, want %d", k, len(iterates))
		}
		iterates = append(iterates, r.X)
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Hypot(x[0]-1, x[1]-1); d >= minimumTolerance {
		t.Errorf("ended at %v, %.3g from (1, 1), want under %g", x, d, minimumTolerance)
	}
	// The first step by hand: at (−1.2, 1), ∇f = (−215.6, −88) and
	// H = [[1330, 480], [480, 200]] (det 35600), so the step H⁻¹∇f is
	// ((200·−215.6 − 480·−88)/35600, (1330·−88 − 480·−215.6)/35600)
	// = (−0.024719101…, −0.380674157…), and x₁ = (−1.175280899, 1.380674157).
	assertNear(t, "first iterate", iterates[1], []float64{-1.2 + 0.0247191011235955, 1 + 0.3806741573033708}, 1e-12)
	// Newton's method converges quadratically: a handful of steps, not hundreds.
	if len(iterates) > 12 {
		t.Errorf("took %d iterates, want a few", len(iterates))
	}
}

func TestNewtonReportsFailure(t *testing.T) {
	e, err := NewEvaluator(2, Rosenbrock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Newton(e, rosenbrockStart, gradientTolerance, 2, func(int, Result) {}); err == nil {
		t.Error("two steps reached the tolerance: want an error")
	}
	if _, err := e.At([]float64{1, 2, 3}); err == nil {
		t.Error("a 3-vector was accepted by a 2-dimensional evaluator")
	}
}

func TestNewtonCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-newton"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d, stderr %q", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "iter  0  x = (-1.200000000000000, 1.000000000000000)") {
		t.Fatalf("output %q does not list the iterates from (-1.2, 1)", stdout.String())
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "x = (1.000000000000000, 1.000000000000000)") {
		t.Errorf("last iterate %q is not (1, 1)", last)
	}
	if code := run([]string{"extra"}, &stdout, &stderr); code != 2 {
		t.Errorf("an unexpected argument gave exit code %d, want 2", code)
	}
	stderr.Reset()
	if code := run([]string{"-h"}, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "Usage of hessian:") {
		t.Errorf("-h: exit code %d, stderr %q; want 0 and the usage", code, stderr.String())
	}
}

// The sparse Hessian of the banded problem takes 5 colours (it is
// pentadiagonal) whatever its size, and agrees with a Hessian–vector
// product.
func TestSparseHessian(t *testing.T) {
	for _, n := range []int{3, 50, 2000} {
		r, err := SparseHessian(n)
		if err != nil {
			t.Fatal(err)
		}
		if r.Colors > 5 || r.NNZ > 5*n {
			t.Errorf("n = %d: %d colours and %d entries, want at most 5 and %d", n, r.Colors, r.NNZ, 5*n)
		}
		if r.MaxDiff > 1e-12 {
			t.Errorf("n = %d: differs from the HVP by %v", n, r.MaxDiff)
		}
	}
	if _, err := SparseHessian(2); err == nil {
		t.Error("2 unknowns: no error")
	}
}
