package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// The Scan of RK4 steps computes the trajectory that plain Go computes.
func TestTrajectoryMatchesPlainGo(t *testing.T) {
	p := DefaultProblem
	m, err := p.Build(3, 0.5, make([]float64, p.Observations()))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := compile.Compile([]*graph.Node{m.X})
	if err != nil {
		t.Fatal(err)
	}
	machine, err := vm.New(prog)
	if err != nil {
		t.Fatal(err)
	}
	if err := machine.Run(nil); err != nil {
		t.Fatal(err)
	}
	x, _ := machine.Value(m.X)
	if d := maxRelDiff(graph.Float64s(x), p.Trajectory(3, 0.5)); d > 1e-12 {
		t.Fatalf("trajectory differs from plain Go's by %v", d)
	}
}

func TestFitRecoversTheParameters(t *testing.T) {
	p := DefaultProblem
	obs := p.Observe(trueK, trueC, noise, 1)
	res, err := Fit(p, obs, startK, startC, 120, 0.05, nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.K-trueK) > 0.05 || math.Abs(res.C-trueC) > 0.03 {
		t.Fatalf("fitted k %v, c %v; true %v, %v", res.K, res.C, trueK, trueC)
	}
	if res.Loss > 1.2*noise*noise {
		t.Fatalf("final mse %v, want about the noise's variance %v", res.Loss, noise*noise)
	}
}

// Second derivatives through the 1000-step Scan equal central differences
// of its gradient, away from the optimum too.
func TestHessianMatchesFiniteDifferences(t *testing.T) {
	p := DefaultProblem
	obs := p.Observe(trueK, trueC, noise, 2)
	for _, kc := range [][2]float64{{startK, startC}, {4.1, 0.25}} {
		h, fd, err := p.Hessian(obs, kc[0], kc[1])
		if err != nil {
			t.Fatal(err)
		}
		if d := maxRelDiff(h, fd); d > hessianTolerance {
			t.Fatalf("at %v: Hessian %v, finite differences %v (relative difference %v)", kc, h, fd, d)
		}
		if math.Abs(h[1]-h[2]) > 1e-12*math.Abs(h[1]) {
			t.Errorf("at %v: Hessian %v is not symmetric", kc, h)
		}
	}
}

func TestRun(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{"-iters", "3"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{"1000 RK4 steps", "iter    3", "Hessian", "largest relative difference"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if code := run([]string{"-iters", "x"}, &out, &errs); code != 2 {
		t.Errorf("bad flag: exit %d, want 2", code)
	}
	errs.Reset()
	if code := run([]string{"-h"}, &out, &errs); code != 0 || !strings.Contains(errs.String(), "Usage of ode:") {
		t.Errorf("-h: exit %d, stderr %q; want 0 and the usage", code, errs.String())
	}
}
