package compile_test

import (
	"reflect"

	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/sweep"
	"github.com/nabla-go/nabla/ops"
)

// sweepFuncs is every exported function of package compile, by name:
// TestSweepTableIsComplete fails when one is missing.
var sweepFuncs = map[string]any{
	"Backward":            compile.Backward,
	"ColorColumns":        compile.ColorColumns,
	"Compile":             compile.Compile,
	"Grad":                compile.Grad,
	"GradWith":            compile.GradWith,
	"Gradients":           compile.Gradients,
	"HVP":                 compile.HVP,
	"Hessian":             compile.Hessian,
	"JVP":                 compile.JVP,
	"Jacobian":            compile.Jacobian,
	"JacobianPattern":     compile.JacobianPattern,
	"JacobianWith":        compile.JacobianWith,
	"PerExampleGradients": compile.PerExampleGradients,
	"SparseHessian":       compile.SparseHessian,
	"SparseJacobian":      compile.SparseJacobian,
	"StarColor":           compile.StarColor,
	"Vmap":                compile.Vmap,
	"WithChecks":          compile.WithChecks,
	"WithFixedDraws":      compile.WithFixedDraws,
	"WithUpdates":         compile.WithUpdates,
	"WithoutPass":         compile.WithoutPass,
	"WriteDot":            compile.WriteDot,
	"ZerosIfDisconnected": compile.ZerosIfDisconnected,
}

// sweepConfig adds functions of the pool's inputs (so that derivatives
// have paths to differentiate along), options and patterns.
var sweepConfig = sweep.Config{Run: true, NilOK: map[string]bool{"Backward": true}, Extra: map[reflect.Type]sweep.Extra{
	reflect.TypeFor[*graph.Node](): func(g *graph.Graph) []any {
		var xs []*graph.Node // the pool's float inputs
		for _, n := range g.Nodes() {
			if n.Kind() == graph.KindInput && graph.IsFloat(n.Type().DType) {
				xs = append(xs, n)
			}
		}
		if len(xs) < 4 {
			return nil
		}
		return []any{ops.Sum(ops.Square(xs[2])), ops.Tanh(xs[3]), ops.MatMul(xs[3], xs[3]), ops.Mul(ops.Sum(xs[1]), xs[1]), ops.Sum(ops.Exp(xs[0]))}
	},
	reflect.TypeFor[compile.Option](): func(*graph.Graph) []any {
		return []any{compile.Option(nil), compile.WithChecks(), compile.WithFixedDraws(), compile.WithoutPass("cse"), compile.WithoutPass("?"), compile.WithUpdates(nil)}
	},
	reflect.TypeFor[compile.GradOption](): func(*graph.Graph) []any {
		return []any{compile.GradOption(nil), compile.ZerosIfDisconnected()}
	},
	reflect.TypeFor[*compile.Pattern](): func(g *graph.Graph) []any {
		x := g.Nodes()[2]
		p, _ := compile.JacobianPattern(ops.Mul(x, x), x)
		return []any{p}
	},
}}

// TestSweepTableIsComplete parses the package's files: each exported
// function is in sweepFuncs, and nothing else is.
func TestSweepTableIsComplete(t *testing.T) { sweep.CheckTable(t, sweepFuncs) }

// TestCompileSweep calls every exported function with hostile arguments
// (see package sweep): none panics, every error names the function and
// the line calling it, and what builds compiles and runs.
func TestCompileSweep(t *testing.T) {
	calls := 150
	if testing.Short() {
		calls = 30
	}
	sweep.Test(t, sweepFuncs, calls, sweepConfig)
}

// FuzzCompileArgs calls the function its first byte picks with the
// arguments its other bytes draw, as TestCompileSweep does.
func FuzzCompileArgs(f *testing.F) { sweep.Fuzz(f, sweepFuncs, sweepConfig) }
