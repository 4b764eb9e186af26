package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
)

func TestInitialisers(t *testing.T) {
	const fanIn, fanOut = 300, 200
	for _, c := range []struct {
		name      string
		init      Init
		mean, std float64
		bound     float64 // 0: unbounded
	}{
		// U(a,b) has mean (a+b)/2 and deviation (b-a)/√12.
		{"Uniform(-1,3)", Uniform(-1, 3), 1, 4 / math.Sqrt(12), 3},
		{"Normal(2,0.5)", Normal(2, 0.5), 2, 0.5, 0},
		// a = √(6/500) = 0.1095; U(-a,a) has deviation a/√3.
		{"XavierUniform(1)", XavierUniform(1), 0, math.Sqrt(6.0/500) / math.Sqrt(3), math.Sqrt(6.0 / 500)},
		// σ = 5/3·√(2/500).
		{"XavierNormal(tanh)", XavierNormal(GainTanh), 0, 5.0 / 3 * math.Sqrt(2.0/500), 0},
		// a = √2·√(3/300) = √(6/300); deviation a/√3 = √(2/300).
		{"KaimingUniform(relu)", KaimingUniform(GainReLU), 0, math.Sqrt(2.0 / 300), math.Sqrt(6.0 / 300)},
		// σ = √2/√300.
		{"KaimingNormal(relu)", KaimingNormal(GainReLU), 0, math.Sqrt2 / math.Sqrt(300), 0},
		{"Constant(0.25)", Constant(0.25), 0.25, 0, 0.25},
		{"Zeros", Zeros(), 0, 0, 0},
		{"Ones", Ones(), 1, 0, 1},
	} {
		draw := func() []float64 {
			w := graph.NewDense(graph.Float64, fanOut, fanIn)
			require.NoError(t, c.init(rand.New(rand.NewPCG(1, 1)), w, fanIn, fanOut), "case %s", c.name)
			return graph.Float64s(w)
		}
		vals := draw()
		require.Equal(t, vals, draw(), "case %s: the same seed gives the same values", c.name)
		var sum, sq, maxAbs float64
		for _, v := range vals {
			sum += v
			maxAbs = max(maxAbs, math.Abs(v))
		}
		mean := sum / float64(len(vals))
		for _, v := range vals {
			sq += (v - mean) * (v - mean)
		}
		std := math.Sqrt(sq / float64(len(vals)))
		// 60,000 draws: the sample mean is within 4σ/√60000 ≈ 0.016σ.
		if math.Abs(mean-c.mean) > 0.02*c.std+1e-12 {
			t.Errorf("case %s: got mean %v, want %v", c.name, mean, c.mean)
		}
		if math.Abs(std-c.std) > 0.02*c.std+1e-12 {
			t.Errorf("case %s: got deviation %v, want %v", c.name, std, c.std)
		}
		if c.bound != 0 && maxAbs > c.bound {
			t.Errorf("case %s: got |value| up to %v, want at most %v", c.name, maxAbs, c.bound)
		}
	}
}

func TestInitialiserErrors(t *testing.T) {
	w := graph.NewDense(graph.Float32, 2, 2)
	rng := rand.New(rand.NewPCG(1, 1))
	for name, init := range map[string]Init{
		"uniform reversed": Uniform(1, -1),
		"uniform NaN":      Uniform(math.NaN(), 1),
		"normal std":       Normal(0, -1),
		"normal inf mean":  Normal(math.Inf(1), 1),
		"xavier gain":      XavierUniform(-1),
		"kaiming gain":     KaimingNormal(math.NaN()),
	} {
		require.Error(t, init(rng, w, 2, 2), "case %s", name)
	}
	require.ErrorContains(t, KaimingUniform(1)(rng, w, 0, 2), "fan-in 0")
}

func TestModulesFollowTheirSeed(t *testing.T) {
	weights := func(opts ...Option) []float64 {
		g := graph.New()
		return graph.Float64s(NewLinear(g, "fc", 3, 2, true, opts...).Weight.Value())
	}
	require.Equal(t, weights(), weights(), "without WithRand, the name seeds the values")
	seeded := func() []float64 { return weights(WithRand(rand.New(rand.NewPCG(5, 5)))) }
	require.Equal(t, seeded(), seeded())
	require.NotEqual(t, weights(), seeded())
	for _, v := range weights() {
		require.LessOrEqual(t, math.Abs(v), 1/math.Sqrt(3), "the default is uniform in ±1/√in")
	}
	g := graph.New()
	require.NotEqual(t, NewLinear(g, "a", 3, 2, false).Weight.Value().Float64s(),
		NewLinear(g, "b", 3, 2, false).Weight.Value().Float64s())
	require.Equal(t, graph.Float32, NewLinear(g, "c", 3, 2, false, WithDType(graph.Float32)).Weight.DType())
}
