package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
)

// The minimiser of (a−x)² + 100(y−x²)² is (a, a²): Root's derivatives
// with respect to a are (1, 2a) and (0, 2), and central differences of
// the solves agree with them.
func TestSensitivityMatchesExact(t *testing.T) {
	m, err := NewMinimiser(ShiftedRosenbrock, rosenbrockStart, gradientTolerance)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []float64{0.7, 1.5, -2} {
		s, err := m.SensitivityAt(a, finiteStep)
		if err != nil {
			t.Fatal(err)
		}
		assertNear(t, "minimiser", s.X, []float64{a, a * a}, 1e-9)
		assertNear(t, "dx/da", s.DX, []float64{1, 2 * a}, 1e-9)
		assertNear(t, "d²x/da²", s.D2X, []float64{0, 2}, 1e-9)
		assertNear(t, "finite dx/da", s.FiniteDX, s.DX, 1e-6)
		assertNear(t, "finite d²x/da²", s.FiniteD2X, s.D2X, 1e-3)
	}
}

// The While loop takes the steps Newton's method in Go takes, to the same
// minimiser: the graph's stopping rule is the Go loop's.
func TestSensitivityNewtonMatchesGo(t *testing.T) {
	const a = 1.0
	m, err := NewMinimiser(ShiftedRosenbrock, rosenbrockStart, gradientTolerance)
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.At(a)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEvaluator(2, func(x *graph.Node) *graph.Node { return ShiftedRosenbrock(x, x.Graph().Scalar(a, graph.Float64)) })
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	x, err := Newton(e, rosenbrockStart, gradientTolerance, maxNewtonSteps, func(k int, _ Result) { steps = k })
	if err != nil {
		t.Fatal(err)
	}
	if s.Steps != steps {
		t.Errorf("the While loop took %d steps, Newton's method in Go %d", s.Steps, steps)
	}
	assertNear(t, "minimiser", s.X, x, 1e-14)
}

func TestSensitivityCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-sensitivity"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d, stderr %q", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"x = (1.500000000000000, 2.250000000000000) after", "dx/da    Root (1.000000000000, 3.000000000000)", "exact (0, 2)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
}
