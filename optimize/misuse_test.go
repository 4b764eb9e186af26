package optimize

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// TestMisuse checks Minimize's errors, each named with the caller's line.
func TestMisuse(t *testing.T) {
	const name = "nabla: optimize.Minimize: "
	for i, c := range []struct {
		// build returns f and the variable, from a graph's parameter x
		// (−1, 2) and input in of shape (2).
		build  func(x, in *graph.Node) (f, wrt *graph.Node)
		method Method
		opts   []Option
		want   string // the error without its " at file:line"
	}{
		{func(x, _ *graph.Node) (*graph.Node, *graph.Node) { return nil, x }, LBFGS, nil, name + "f is nil"},
		{func(x, _ *graph.Node) (*graph.Node, *graph.Node) { return ops.Sum(x), nil }, LBFGS, nil, name + "x is nil"},
		{func(x, _ *graph.Node) (*graph.Node, *graph.Node) { return ops.Square(x), x }, LBFGS, nil,
			name + `f (Square #2 float64(2)) is not a scalar`},
		{func(_, in *graph.Node) (*graph.Node, *graph.Node) { return ops.Sum(in), in }, LBFGS, nil,
			name + `x (input "in" #1 float64(2)) is not a parameter (Graph.Param), whose value the method moves`},
		{func(x, _ *graph.Node) (*graph.Node, *graph.Node) {
			return ops.Sum(x), graph.New().Param("y", graph.NewDense(graph.Float64, 2))
		}, LBFGS, nil, name + `f (Sum #2 float64()) and x (param "y" #0 float64(2)) belong to different graphs`},
		{func(x, _ *graph.Node) (*graph.Node, *graph.Node) { return ops.Sum(x), x }, Method(7), nil,
			name + "unknown method Method(7): want LBFGS, Newton or NewtonCG"},
		{func(x, _ *graph.Node) (*graph.Node, *graph.Node) { return ops.Sum(x), x }, LBFGS, []Option{WithGradTol(math.NaN())},
			name + "WithGradTol: tolerance NaN is not in (0, +Inf)"},
		{func(x, _ *graph.Node) (*graph.Node, *graph.Node) { return ops.Sum(x), x }, LBFGS, []Option{WithMaxIterations(-1)},
			name + "WithMaxIterations: -1 is negative"},
		{func(x, _ *graph.Node) (*graph.Node, *graph.Node) { return ops.Sum(x), x }, LBFGS, []Option{WithMemory(0)},
			name + "WithMemory: 0 steps: want at least 1"},
		{func(x, _ *graph.Node) (*graph.Node, *graph.Node) { return ops.Sum(ops.Log(x)), x }, Newton, nil,
			name + "the function's value is NaN at the start x0 = [-1 2]"},
		{func(x, in *graph.Node) (*graph.Node, *graph.Node) { return ops.Sum(ops.Mul(x, in)), x }, NewtonCG, nil,
			name + `at the start: Run: input "in" (float64(2)) is not fed`},
		{func(x, in *graph.Node) (*graph.Node, *graph.Node) { return ops.Sum(ops.Mul(x, in)), x }, LBFGS,
			[]Option{WithFeeds(vm.Feeds{nil: graph.NewDense(graph.Float64, 2)})}, name + "at the start: Run: feed for a nil node"},
		{func(x, in *graph.Node) (*graph.Node, *graph.Node) { return ops.Sum(in), x }, LBFGS, nil,
			name + `Grad: param "x" #0 float64(2) has no gradient: no path from the output reaches it (use ZerosIfDisconnected for zeros)`},
		// A graph with a build error gives that error, named where it arose.
		{func(x, _ *graph.Node) (*graph.Node, *graph.Node) {
			return ops.Sum(ops.Add(x, x.Graph().Input("z", graph.Float64, 3))), x
		}, LBFGS, nil, "nabla: Add: shapes (2) and (3) do not broadcast (dimension 0: 2 vs 3) at misuse_test.go:"},
	} {
		g := graph.New()
		x0, _ := graph.FromFloat64s(graph.Float64, []float64{-1, 2}, 2)
		f, x := c.build(g.Param("x", x0), g.Input("in", graph.Float64, 2))
		_, _, line, _ := runtime.Caller(0)
		_, err := Minimize(f, x, c.method, c.opts...) // line+1
		if err == nil {
			t.Errorf("case %d: no error, want %q", i, c.want)
			continue
		}
		if strings.HasSuffix(c.want, ":") {
			if !strings.HasPrefix(err.Error(), c.want) || strings.Count(err.Error(), " at ") != 1 {
				t.Errorf("case %d: got %q, want %q and the line", i, err, c.want)
			}
			continue
		}
		if want := c.want + fmt.Sprintf(" at misuse_test.go:%d", line+1); err.Error() != want {
			t.Errorf("case %d: got %q, want %q", i, err, want)
		}
	}
}

func TestMisuseFunc(t *testing.T) {
	const name = "nabla: optimize.MinimizeFunc: "
	for i, c := range []struct {
		p      Problem
		x0     []float64
		method Method
		opts   []Option
		want   string
	}{
		{Problem{}, []float64{1}, LBFGS, nil, name + "Problem.FuncGrad is nil"},
		{rosenbrockProblem, nil, LBFGS, nil, name + "x0 is empty"},
		{Problem{FuncGrad: rosenbrockProblem.FuncGrad}, []float64{1, 2}, Newton, nil, name + "Newton needs Problem.Hess, which is nil"},
		{Problem{FuncGrad: rosenbrockProblem.FuncGrad}, []float64{1, 2}, NewtonCG, nil, name + "NewtonCG needs Problem.HessVec, which is nil"},
		{rosenbrockProblem, []float64{1, 2}, LBFGS, []Option{WithFeeds(vm.Feeds{})}, name + "WithFeeds is for Minimize's graphs: a Problem's functions take no feeds"},
		{rosenbrockProblem, []float64{math.Inf(1), 2}, LBFGS, nil, name + "the function's value is +Inf at the start x0 = [+Inf 2]"},
		{rosenbrockProblem, []float64{1, 2}, 0, nil, name + "unknown method Method(0): want LBFGS, Newton or NewtonCG"},
	} {
		_, _, line, _ := runtime.Caller(0)
		_, err := MinimizeFunc(c.p, c.x0, c.method, c.opts...) // line+1
		if want := c.want + fmt.Sprintf(" at misuse_test.go:%d", line+1); err == nil || err.Error() != want {
			t.Errorf("case %d: got %v, want %q", i, err, want)
		}
	}
}

// TestHessianFailure: a Hessian that is not finite at an iterate ends the
// run with status Failed, the error naming the element, and the result so
// far.
func TestHessianFailure(t *testing.T) {
	p := rosenbrockProblem
	p.Hess = func(h, x []float64) {
		rosenbrockHessian(h, x)
		h[1] = math.NaN()
	}
	r, err := MinimizeFunc(p, []float64{-1.2, 1}, Newton)
	want := "nabla: optimize.MinimizeFunc: the Hessian's element (0, 1) is NaN at misuse_test.go:"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %q…", err, want)
	}
	if r.Status != Failed || r.Converged || r.X[0] != -1.2 || r.HessEvals != 1 || r.FuncEvals != 1 {
		t.Errorf("result %+v: want status Failed at the start after one Hessian", r)
	}
}
