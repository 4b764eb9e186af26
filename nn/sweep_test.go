package nn_test

import (
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/sweep"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
)

// sweepFuncs is every exported function of package nn, by name:
// TestSweepTableIsComplete fails when one is missing.
var sweepFuncs = map[string]any{
	"Apply":                     nn.Apply,
	"BCELoss":                   nn.BCELoss,
	"BCEWithLogits":             nn.BCEWithLogits,
	"BCEWithLogitsLoss":         nn.BCEWithLogitsLoss,
	"Buffers":                   nn.Buffers,
	"Constant":                  nn.Constant,
	"CosineEmbeddingLoss":       nn.CosineEmbeddingLoss,
	"CrossEntropy":              nn.CrossEntropy,
	"DefaultAdam":               nn.DefaultAdam,
	"DefaultAdamW":              nn.DefaultAdamW,
	"DropoutMask":               nn.DropoutMask,
	"Format":                    nn.Format,
	"Frozen":                    nn.Frozen,
	"GaussianNLLLoss":           nn.GaussianNLLLoss,
	"HingeEmbeddingLoss":        nn.HingeEmbeddingLoss,
	"HuberLoss":                 nn.HuberLoss,
	"KLDivLoss":                 nn.KLDivLoss,
	"KaimingNormal":             nn.KaimingNormal,
	"KaimingUniform":            nn.KaimingUniform,
	"LinearFunc":                nn.LinearFunc,
	"Load":                      nn.Load,
	"MSE":                       nn.MSE,
	"MarginRankingLoss":         nn.MarginRankingLoss,
	"Modules":                   nn.Modules,
	"MultiMarginLoss":           nn.MultiMarginLoss,
	"NLLLoss":                   nn.NLLLoss,
	"NamedBuffers":              nn.NamedBuffers,
	"NamedParameters":           nn.NamedParameters,
	"NewAdam":                   nn.NewAdam,
	"NewAdamW":                  nn.NewAdamW,
	"NewBatchNorm1d":            nn.NewBatchNorm1d,
	"NewBatchNorm2d":            nn.NewBatchNorm2d,
	"NewConv2d":                 nn.NewConv2d,
	"NewConvTranspose2d":        nn.NewConvTranspose2d,
	"NewDropout":                nn.NewDropout,
	"NewEmbedding":              nn.NewEmbedding,
	"NewGRU":                    nn.NewGRU,
	"NewGRUCell":                nn.NewGRUCell,
	"NewLSTM":                   nn.NewLSTM,
	"NewLSTMCell":               nn.NewLSTMCell,
	"NewLayerNorm":              nn.NewLayerNorm,
	"NewLinear":                 nn.NewLinear,
	"NewMultiheadAttention":     nn.NewMultiheadAttention,
	"NewRNN":                    nn.NewRNN,
	"NewRNNCell":                nn.NewRNNCell,
	"NewSGD":                    nn.NewSGD,
	"NewSequential":             nn.NewSequential,
	"NewTransformerBlock":       nn.NewTransformerBlock,
	"NonStrict":                 nn.NonStrict,
	"Normal":                    nn.Normal,
	"Ones":                      nn.Ones,
	"Parameters":                nn.Parameters,
	"PoissonNLLLoss":            nn.PoissonNLLLoss,
	"Prefix":                    nn.Prefix,
	"ReadSafetensors":           nn.ReadSafetensors,
	"Save":                      nn.Save,
	"ScaledDotProductAttention": nn.ScaledDotProductAttention,
	"SetTraining":               nn.SetTraining,
	"SkipDisconnected":          nn.SkipDisconnected,
	"SmoothL1Loss":              nn.SmoothL1Loss,
	"SoftMarginLoss":            nn.SoftMarginLoss,
	"StateOf":                   nn.StateOf,
	"StateUpdates":              nn.StateUpdates,
	"TrainingUpdates":           nn.TrainingUpdates,
	"TransformGradients":        nn.TransformGradients,
	"TripletMarginLoss":         nn.TripletMarginLoss,
	"Uniform":                   nn.Uniform,
	"WithBeta":                  nn.WithBeta,
	"WithBiasInit":              nn.WithBiasInit,
	"WithDType":                 nn.WithDType,
	"WithDelta":                 nn.WithDelta,
	"WithEps":                   nn.WithEps,
	"WithFull":                  nn.WithFull,
	"WithIgnoreIndex":           nn.WithIgnoreIndex,
	"WithInit":                  nn.WithInit,
	"WithLogInput":              nn.WithLogInput,
	"WithLogTarget":             nn.WithLogTarget,
	"WithMargin":                nn.WithMargin,
	"WithPosWeight":             nn.WithPosWeight,
	"WithRand":                  nn.WithRand,
	"WithReduction":             nn.WithReduction,
	"WithWeight":                nn.WithWeight,
	"WriteSafetensors":          nn.WriteSafetensors,
	"XavierNormal":              nn.XavierNormal,
	"XavierUniform":             nn.XavierUniform,
	"Zeros":                     nn.Zeros,
}

// sweepConfig gives the sweep modules, optimisers, initialisers, options
// and generators of random numbers, from their constructors. Builds are
// not run: the constructors' parameters are initialised, not fed.
var sweepConfig = sweep.Config{
	Aliases: map[string][]string{"TrainingUpdates": {"Adam", "SGD"}}, // "nn: Adam: … (called at train.go:40)"
	Extra: map[reflect.Type]sweep.Extra{
		reflect.TypeFor[nn.Module](): func(g *graph.Graph) []any {
			return []any{nn.Module(nil), nn.NewLinear(g, "fc", 3, 2, true), nn.NewSequential("s"), &nn.Linear{}}
		},
		reflect.TypeFor[nn.Optimizer](): func(*graph.Graph) []any {
			return []any{nn.Optimizer(nil), nn.NewAdam(nn.DefaultAdam()), nn.NewSGD(nn.SGDConfig{LR: 0.1}), (*nn.Adam)(nil)}
		},
		reflect.TypeFor[nn.Init](): func(*graph.Graph) []any {
			return []any{nn.Init(nil), nn.Zeros(), nn.Normal(0, math.Inf(1)), nn.Constant(math.NaN()), nn.XavierUniform(-1), nn.KaimingNormal(0)}
		},
		reflect.TypeFor[nn.LossOption](): func(g *graph.Graph) []any {
			return []any{nn.LossOption(nil), nn.WithReduction(-1), nn.WithReduction(7), nn.WithDelta(math.NaN()), nn.WithMargin(-1), nn.WithEps(0),
				nn.WithIgnoreIndex(-100), nn.WithWeight(nil), nn.WithPosWeight(g.Input("pw", graph.Float64, 3)), nn.WithFull(), nn.WithLogTarget()}
		},
		reflect.TypeFor[nn.Option](): func(*graph.Graph) []any {
			return []any{nn.Option(nil), nn.WithDType(graph.Float32), nn.WithDType(graph.Int64), nn.WithInit(nil), nn.WithBiasInit(nn.Ones()), nn.WithRand(nil)}
		},
		reflect.TypeFor[nn.TrainingOption](): func(*graph.Graph) []any {
			return []any{nn.TrainingOption(nil), nn.Frozen(nil), nn.SkipDisconnected(nil), nn.TransformGradients(nil)}
		},
		reflect.TypeFor[nn.LoadOption](): func(*graph.Graph) []any { return []any{nn.LoadOption(nil), nn.NonStrict()} },
		reflect.TypeFor[*rand.Rand]():    func(*graph.Graph) []any { return []any{(*rand.Rand)(nil), rand.New(rand.NewSource(1))} },
		reflect.TypeFor[ops.ConvOptions](): func(*graph.Graph) []any {
			return []any{ops.ConvOptions{}, ops.ConvOptions{Stride: []int{2}, Padding: []int{1}}}
		},
	}}

// TestSweepTableIsComplete parses the package's files: each exported
// function is in sweepFuncs, and nothing else is.
func TestSweepTableIsComplete(t *testing.T) { sweep.CheckTable(t, sweepFuncs) }

// TestNNSweep calls every exported function with hostile arguments (see
// package sweep): none panics, and every error names the function and
// the line calling it.
func TestNNSweep(t *testing.T) {
	calls := 100
	if testing.Short() {
		calls = 20
	}
	sweep.Test(t, sweepFuncs, calls, sweepConfig)
}

// FuzzNNArgs calls the function its first byte picks with the arguments
// its other bytes draw, as TestNNSweep does.
func FuzzNNArgs(f *testing.F) { sweep.Fuzz(f, sweepFuncs, sweepConfig) }
