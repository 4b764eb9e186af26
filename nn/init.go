package nn

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// Init fills t, the initial value of a new parameter, drawing from rng.
// fanIn and fanOut are the number of inputs each output of the layer sees
// and the number of outputs each input feeds; the scaled initialisers
// (Xavier, Kaiming) size their spread from them. An initialiser returns an
// error for arguments it cannot use (a negative spread, say).
type Init func(rng *rand.Rand, t *tensor.Dense, fanIn, fanOut int) error

// Gains for XavierUniform, XavierNormal, KaimingUniform and KaimingNormal,
// as PyTorch's calculate_gain gives them: they keep the variance of
// activations steady through layers followed by the named nonlinearity.
const (
	GainLinear  = 1.0        // no nonlinearity
	GainSigmoid = 1.0        // sigmoid
	GainTanh    = 5.0 / 3    // tanh
	GainReLU    = math.Sqrt2 // ReLU
)

// Constant fills a parameter with v.
func Constant(v float64) Init {
	return func(_ *rand.Rand, t *tensor.Dense, _, _ int) error {
		for i := range t.DataSize() {
			graph.SetFloat(t, i, v)
		}
		return nil
	}
}

// Zeros fills a parameter with zeros.
func Zeros() Init { return Constant(0) }

// Ones fills a parameter with ones.
func Ones() Init { return Constant(1) }

// Uniform draws each element uniformly from [lo, hi).
func Uniform(lo, hi float64) Init {
	return func(rng *rand.Rand, t *tensor.Dense, _, _ int) error {
		if !(lo <= hi) || math.IsInf(hi-lo, 0) {
			return fmt.Errorf("Uniform(%v, %v): want finite lo ≤ hi", lo, hi)
		}
		for i := range t.DataSize() {
			graph.SetFloat(t, i, lo+(hi-lo)*rng.Float64())
		}
		return nil
	}
}

// Normal draws each element from a normal distribution of the given mean
// and standard deviation.
func Normal(mean, std float64) Init {
	return func(rng *rand.Rand, t *tensor.Dense, _, _ int) error {
		if !(std >= 0) || math.IsInf(std, 0) || math.IsNaN(mean) || math.IsInf(mean, 0) {
			return fmt.Errorf("Normal(%v, %v): want a finite mean and std ≥ 0", mean, std)
		}
		for i := range t.DataSize() {
			graph.SetFloat(t, i, mean+std*rng.NormFloat64())
		}
		return nil
	}
}

// XavierUniform (Glorot uniform) draws from U(-a, a) with
// a = gain·√(6/(fanIn+fanOut)), which keeps the variance of activations and
// of gradients alike through a layer.
func XavierUniform(gain float64) Init {
	return scaled("XavierUniform", gain, func(fanIn, fanOut int) float64 {
		return math.Sqrt(6 / float64(fanIn+fanOut))
	}, true)
}

// XavierNormal (Glorot normal) draws from N(0, σ²) with
// σ = gain·√(2/(fanIn+fanOut)).
func XavierNormal(gain float64) Init {
	return scaled("XavierNormal", gain, func(fanIn, fanOut int) float64 {
		return math.Sqrt(2 / float64(fanIn+fanOut))
	}, false)
}

// KaimingUniform (He uniform, fan-in mode) draws from U(-a, a) with
// a = gain·√(3/fanIn); use GainReLU before a ReLU.
func KaimingUniform(gain float64) Init {
	return scaled("KaimingUniform", gain, func(fanIn, _ int) float64 {
		return math.Sqrt(3 / float64(fanIn))
	}, true)
}

// KaimingNormal (He normal, fan-in mode) draws from N(0, σ²) with
// σ = gain/√fanIn; use GainReLU before a ReLU.
func KaimingNormal(gain float64) Init {
	return scaled("KaimingNormal", gain, func(fanIn, _ int) float64 {
		return 1 / math.Sqrt(float64(fanIn))
	}, false)
}

// scaled is an initialiser whose spread is gain times a factor of the fans:
// the half-width of a uniform distribution, or a normal's deviation.
func scaled(name string, gain float64, factor func(fanIn, fanOut int) float64, uniform bool) Init {
	return func(rng *rand.Rand, t *tensor.Dense, fanIn, fanOut int) error {
		if fanIn <= 0 || fanOut <= 0 {
			return fmt.Errorf("%s: fan-in %d and fan-out %d must be positive", name, fanIn, fanOut)
		}
		if !(gain >= 0) || math.IsInf(gain, 0) {
			return fmt.Errorf("%s: gain %v must be finite and ≥ 0", name, gain)
		}
		spread := gain * factor(fanIn, fanOut)
		if uniform {
			return Uniform(-spread, spread)(rng, t, fanIn, fanOut)
		}
		return Normal(0, spread)(rng, t, fanIn, fanOut)
	}
}

// Option configures a module's construction.
type Option func(*options)

type options struct {
	rng        *rand.Rand
	dtype      tensor.Dtype
	weightInit Init
	biasInit   Init
}

// WithRand draws a module's initial values (and Dropout's seed) from rng.
// Without it a module draws from a generator seeded with a hash of its
// name, so a model is the same from run to run and layers with different
// names differ; pass one seeded generator to every module to make a whole
// model follow one seed.
func WithRand(rng *rand.Rand) Option { return func(o *options) { o.rng = rng } }

// WithDType makes a module's parameters float32 or float64 (the default).
func WithDType(dtype tensor.Dtype) Option { return func(o *options) { o.dtype = dtype } }

// WithInit sets the initialiser of a module's weight.
func WithInit(init Init) Option { return func(o *options) { o.weightInit = init } }

// WithBiasInit sets the initialiser of a module's bias.
func WithBiasInit(init Init) Option { return func(o *options) { o.biasInit = init } }

// builder makes a module's parameters: kind is the module's type
// ("Linear"), name the name it was given, which prefixes its parameters'
// node names ("fc1.weight") and names its scope.
type builder struct {
	g          *graph.Graph
	kind, name string
	o          options
}

// newBuilder applies opts over a module's default initialisers.
func newBuilder(g *graph.Graph, kind, name string, weight, bias Init, opts []Option) *builder {
	if name == "" {
		name = kind
	}
	o := options{dtype: graph.Float64, weightInit: weight, biasInit: bias}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.rng == nil {
		h := fnv.New64a()
		h.Write([]byte(name))
		o.rng = rand.New(rand.NewPCG(h.Sum64(), 0x6e61626c61)) // "nabla"
	}
	return &builder{g: g, kind: kind, name: name, o: o}
}

// fail records a construction error on the graph and returns a poisoned
// node to stand for the parameter that could not be made.
func (b *builder) fail(format string, args ...any) *graph.Node {
	err := &graph.Error{Op: "nn.New" + b.kind, Err: fmt.Errorf("%q: "+format, append([]any{b.name}, args...)...), Site: graph.CallerSite()}
	if b.g == nil {
		return graph.Poisoned(nil)
	}
	return b.g.Fail(err)
}

// param adds a parameter of the given shape, initialised by init.
func (b *builder) param(name string, init Init, fanIn, fanOut int, shape ...int) *graph.Node {
	switch {
	case b.g == nil:
		return b.fail("graph is nil")
	case !graph.IsFloat(b.o.dtype):
		return b.fail("dtype %v is not supported (float32 or float64)", b.o.dtype)
	case init == nil:
		return b.fail("%s: initialiser is nil", name)
	}
	for _, d := range shape {
		if d <= 0 {
			return b.fail("%s: shape %s must have positive dimensions", name, graph.ShapeString(shape))
		}
	}
	if _, err := graph.Bytes(b.o.dtype, shape, 0); err != nil {
		return b.fail("%s: %v", name, err)
	}
	t := graph.NewDense(b.o.dtype, shape...)
	if err := runInit(init, b.o.rng, t, fanIn, fanOut); err != nil {
		return b.fail("%s: %v", name, err)
	}
	return b.g.Param(join(b.name, name), t)
}

// buffer adds a scalar float64 buffer starting at zero.
func (b *builder) buffer(name string) *graph.Node {
	if b.g == nil {
		return b.fail("graph is nil")
	}
	return b.g.Param(join(b.name, name), graph.NewDense(graph.Float64))
}

// runInit calls a (possibly user-written) initialiser, turning a panic into
// an error.
func runInit(init Init, rng *rand.Rand, t *tensor.Dense, fanIn, fanOut int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("initialiser panicked: %v", r)
		}
	}()
	return init(rng, t, fanIn, fanOut)
}
