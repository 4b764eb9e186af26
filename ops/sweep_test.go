package ops_test

import (
	"math"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/sweep"
	"github.com/nabla-go/nabla/ops"
)

// sweepFuncs is every exported function of package ops, and the
// Generator's methods, by name: TestSweepTableIsComplete fails when one
// is missing, so that a new op joins the sweep.
var sweepFuncs = map[string]any{
	"Abs":                   ops.Abs,
	"AdamM32":               ops.AdamM32,
	"Add":                   ops.Add,
	"AvgPool2D":             ops.AvgPool2D,
	"BatchNorm":             ops.BatchNorm,
	"BroadcastIndexC":       ops.BroadcastIndexC,
	"BroadcastTo":           ops.BroadcastTo,
	"CType":                 ops.CType,
	"Cast":                  ops.Cast,
	"ChannelAffine":         ops.ChannelAffine,
	"ChannelMean":           ops.ChannelMean,
	"ChannelSum":            ops.ChannelSum,
	"ChannelVar":            ops.ChannelVar,
	"Checkpoint":            ops.Checkpoint,
	"Cholesky":              ops.Cholesky,
	"CholeskySolve":         ops.CholeskySolve,
	"Concat":                ops.Concat,
	"Cond":                  ops.Cond,
	"ContiguousView":        ops.ContiguousView,
	"Conv1D":                ops.Conv1D,
	"Conv2D":                ops.Conv2D,
	"ConvAsProducts":        ops.ConvAsProducts,
	"ConvTranspose2D":       ops.ConvTranspose2D,
	"Cos":                   ops.Cos,
	"CrossEntropy":          ops.CrossEntropy,
	"CrossEntropyOneHot":    ops.CrossEntropyOneHot,
	"DecompositionPart":     ops.DecompositionPart,
	"DenseUpTo":             ops.DenseUpTo,
	"Describe":              ops.Describe,
	"Det":                   ops.Det,
	"DiagEmbed":             ops.DiagEmbed,
	"Diagonal":              ops.Diagonal,
	"Div":                   ops.Div,
	"Eigh":                  ops.Eigh,
	"ElementwiseC":          ops.ElementwiseC,
	"ElementwiseCPrelude":   ops.ElementwiseCPrelude,
	"Equal":                 ops.Equal,
	"Erf":                   ops.Erf,
	"Exp":                   ops.Exp,
	"Eye":                   ops.Eye,
	"FactoredLU":            ops.FactoredLU,
	"FixedPoint":            ops.FixedPoint,
	"Flatten":               ops.Flatten,
	"GELU":                  ops.GELU,
	"Gather":                ops.Gather,
	"GlobalAvgPool2D":       ops.GlobalAvgPool2D,
	"Greater":               ops.Greater,
	"Identity":              ops.Identity,
	"Inverse":               ops.Inverse,
	"IsAdd":                 ops.IsAdd,
	"IsDiv":                 ops.IsDiv,
	"IsElementwise":         ops.IsElementwise,
	"IsIdentityLike":        ops.IsIdentityLike,
	"IsInverse":             ops.IsInverse,
	"IsLayout":              ops.IsLayout,
	"IsMatMul":              ops.IsMatMul,
	"IsMul":                 ops.IsMul,
	"IsNeg":                 ops.IsNeg,
	"IsReshape":             ops.IsReshape,
	"IsScale":               ops.IsScale,
	"IsSub":                 ops.IsSub,
	"IsTranspose":           ops.IsTranspose,
	"JoinPads":              ops.JoinPads,
	"JointDecomposition":    ops.JointDecomposition,
	"LUFactorsOp":           ops.LUFactorsOp,
	"Less":                  ops.Less,
	"Log":                   ops.Log,
	"Log1p":                 ops.Log1p,
	"LogDet":                ops.LogDet,
	"LogSoftmax":            ops.LogSoftmax,
	"LogSumExp":             ops.LogSumExp,
	"LogSumExpKeepDims":     ops.LogSumExpKeepDims,
	"MatMul":                ops.MatMul,
	"MatMulAdd":             ops.MatMulAdd,
	"MatMulT":               ops.MatMulT,
	"MatrixExp":             ops.MatrixExp,
	"Max":                   ops.Max,
	"MaxKeepDims":           ops.MaxKeepDims,
	"MaxPool2D":             ops.MaxPool2D,
	"MaxSteps":              ops.MaxSteps,
	"Maximum":               ops.Maximum,
	"Mean":                  ops.Mean,
	"MeanKeepDims":          ops.MeanKeepDims,
	"Minimum":               ops.Minimum,
	"MoveAxis":              ops.MoveAxis,
	"Mul":                   ops.Mul,
	"Neg":                   ops.Neg,
	"NewFused":              ops.NewFused,
	"NewGenerator":          ops.NewGenerator,
	"OneHot":                ops.OneHot,
	"Pad":                   ops.Pad,
	"Pow":                   ops.Pow,
	"PowConst":              ops.PowConst,
	"QR":                    ops.QR,
	"RandomBernoulli":       ops.RandomBernoulli,
	"RandomCategorical":     ops.RandomCategorical,
	"RandomGamma":           ops.RandomGamma,
	"RandomInt":             ops.RandomInt,
	"RandomNormal":          ops.RandomNormal,
	"RandomNormalLike":      ops.RandomNormalLike,
	"RandomPermutation":     ops.RandomPermutation,
	"RandomUniform":         ops.RandomUniform,
	"RandomUniformLike":     ops.RandomUniformLike,
	"ReLU":                  ops.ReLU,
	"ReadThrough":           ops.ReadThrough,
	"Reshape":               ops.Reshape,
	"Reverse":               ops.Reverse,
	"Root":                  ops.Root,
	"SVD":                   ops.SVD,
	"Scale":                 ops.Scale,
	"ScaleOp":               ops.ScaleOp,
	"Scan":                  ops.Scan,
	"ScanLayoutOf":          ops.ScanLayoutOf,
	"ScatterAdd":            ops.ScatterAdd,
	"SeparateRuns":          ops.SeparateRuns,
	"SiLU":                  ops.SiLU,
	"Sigmoid":               ops.Sigmoid,
	"Sign":                  ops.Sign,
	"Sin":                   ops.Sin,
	"Slice":                 ops.Slice,
	"SlogDet":               ops.SlogDet,
	"Softmax":               ops.Softmax,
	"Softplus":              ops.Softplus,
	"Solve":                 ops.Solve,
	"SolveOp":               ops.SolveOp,
	"Sqrt":                  ops.Sqrt,
	"Square":                ops.Square,
	"Steps":                 ops.Steps,
	"StopGradient":          ops.StopGradient,
	"Sub":                   ops.Sub,
	"Sum":                   ops.Sum,
	"SumKeepDims":           ops.SumKeepDims,
	"SumTo":                 ops.SumTo,
	"Tanh":                  ops.Tanh,
	"Trace":                 ops.Trace,
	"Transpose":             ops.Transpose,
	"TransposeOp":           ops.TransposeOp,
	"TriangularSolve":       ops.TriangularSolve,
	"Tril":                  ops.Tril,
	"Triu":                  ops.Triu,
	"Until":                 ops.Until,
	"Where":                 ops.Where,
	"While":                 ops.While,
	"Generator.Bernoulli":   (*ops.Generator).Bernoulli,
	"Generator.Categorical": (*ops.Generator).Categorical,
	"Generator.Gamma":       (*ops.Generator).Gamma,
	"Generator.Int":         (*ops.Generator).Int,
	"Generator.Normal":      (*ops.Generator).Normal,
	"Generator.NormalLike":  (*ops.Generator).NormalLike,
	"Generator.Permutation": (*ops.Generator).Permutation,
	"Generator.Stream":      (*ops.Generator).Stream,
	"Generator.Uniform":     (*ops.Generator).Uniform,
	"Generator.UniformLike": (*ops.Generator).UniformLike,
	"Generator.Updates":     (*ops.Generator).Updates,
}

// generatorSeeds numbers the generators the sweep makes, one seed each.
var generatorSeeds atomic.Uint64

// sweepConfig gives the sweep the values of package ops' own types that it
// cannot make: options from their constructors, ops, generators.
var sweepConfig = sweep.Config{Run: true, Extra: map[reflect.Type]sweep.Extra{
	reflect.TypeFor[ops.ScanOption](): func(*graph.Graph) []any {
		return []any{ops.ScanOption(nil), ops.Steps(-1), ops.Steps(0), ops.Steps(2), ops.Steps(math.MaxInt), ops.Reverse(), ops.SeparateRuns(), ops.Until()}
	},
	reflect.TypeFor[ops.WhileOption](): func(*graph.Graph) []any {
		return []any{ops.WhileOption(nil), ops.MaxSteps(-1), ops.MaxSteps(0), ops.MaxSteps(3), ops.MaxSteps(math.MaxInt)}
	},
	reflect.TypeFor[ops.RootOption](): func(*graph.Graph) []any {
		return []any{ops.RootOption(nil), ops.DenseUpTo(-1), ops.DenseUpTo(0), ops.DenseUpTo(math.MaxInt)}
	},
	reflect.TypeFor[graph.Op](): func(*graph.Graph) []any {
		return []any{ops.ScaleOp(2), ops.MatMulOp{}, ops.TransposeOp([]int{1, 0}), ops.LUFactorsOp(), ops.SolveOp(false, true)}
	},
	reflect.TypeFor[ops.View](): func(*graph.Graph) []any {
		v, _ := ops.ContiguousView([]int{3, 3})
		return []any{v}
	},
	reflect.TypeFor[*ops.Generator](): func(g *graph.Graph) []any {
		return []any{ops.NewGenerator(g, "rng", generatorSeeds.Add(1))}
	},
}}

// TestSweepTableIsComplete parses the package's files: each exported
// function, and each method of Generator, is in sweepFuncs, and nothing
// else is.
func TestSweepTableIsComplete(t *testing.T) { sweep.CheckTable(t, sweepFuncs, "Generator") }

// TestOpSweep calls every exported function with hostile arguments (see
// package sweep), the same draws at every run: none panics, every error
// names the function and the line calling it, and what builds compiles,
// differentiates and runs without a panic.
func TestOpSweep(t *testing.T) {
	calls := 150
	if testing.Short() {
		calls = 30
	}
	sweep.Test(t, sweepFuncs, calls, sweepConfig)
}

// FuzzOpArgs calls the function its first byte picks with the arguments its
// other bytes draw, as TestOpSweep does.
func FuzzOpArgs(f *testing.F) { sweep.Fuzz(f, sweepFuncs, sweepConfig) }
