package ops

import (
	"fmt"
	"runtime"
	"sync"
	"weak"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// Generator is a graph's source of randomness: a seed, a step counter held
// by the machine like a parameter, and a count of the streams handed out.
// Each sampling node built through it gets a stream of its own, fixed when
// the node is built, so two nodes never share random bits; each run of a
// program that applies Updates advances the step, so two runs never repeat
// them; and everything is a pure function of (seed, stream, step, element),
// so a run is reproducible from the seed and the step on any number of
// threads, and a checkpoint holding the step resumes the sequence.
//
// A graph holds one generator per seed: NewGenerator refuses a second with
// the same seed, which would hand out the same streams.
type Generator struct {
	// Step is the float64 scalar parameter counting the runs (exact up to
	// 2⁵³); it selects the values every stream draws.
	Step    *graph.Node
	seed    uint64
	streams uint64
	updates map[*graph.Node]*graph.Node
}

// NewGenerator adds to g a generator with the given seed, whose step
// counter is the parameter named name (starting at 0). A second generator
// with the same seed on the same graph is an error: it would draw the
// first one's streams.
func NewGenerator(g *graph.Graph, name string, seed uint64) *Generator {
	if g != nil && g.Err() == nil && !claimSeed(g, seed) {
		return &Generator{Step: g.Fail(&graph.Error{Op: "NewGenerator", Site: graph.CallerSite(),
			Err: fmt.Errorf("the graph already has a generator with seed %d, whose streams this one would repeat: use that generator, or another seed", seed)})}
	}
	return &Generator{Step: g.Param(name, graph.NewDense(graph.Float64)), seed: seed}
}

// seedsInUse holds, for each live graph, the seeds of its generators; an
// entry goes when its graph is collected.
var seedsInUse = struct {
	sync.Mutex
	m map[weak.Pointer[graph.Graph]]map[uint64]bool
}{m: map[weak.Pointer[graph.Graph]]map[uint64]bool{}}

// claimSeed records seed for g and reports whether it was free.
func claimSeed(g *graph.Graph, seed uint64) bool {
	key := weak.Make(g)
	seedsInUse.Lock()
	defer seedsInUse.Unlock()
	seeds, ok := seedsInUse.m[key]
	if !ok {
		seeds = map[uint64]bool{}
		seedsInUse.m[key] = seeds
		runtime.AddCleanup(g, func(key weak.Pointer[graph.Graph]) {
			seedsInUse.Lock()
			delete(seedsInUse.m, key)
			seedsInUse.Unlock()
		}, key)
	}
	if seeds[seed] {
		return false
	}
	seeds[seed] = true
	return true
}

// Stream hands out the generator's next stream; the builders below call it
// once per node. It fails (with a poisoned node) past 2³² streams.
func (r *Generator) Stream() (Stream, *graph.Node) {
	if r == nil || r.Step == nil {
		return Stream{}, (*graph.Graph)(nil).Fail(&graph.Error{Op: "Generator", Err: fmt.Errorf("the generator is nil: make one with ops.NewGenerator"), Site: graph.CallerSite()})
	}
	if p := graph.Poisoned(r.Step); p != nil {
		return Stream{}, p
	}
	if t := r.Step.Type(); t.DType != graph.Float64 || t.Rank() != 0 {
		return Stream{}, r.Step.Graph().Fail(&graph.Error{Op: "Generator", Err: fmt.Errorf("Step is %v, not a float64 scalar: make the generator with ops.NewGenerator", r.Step), Site: graph.CallerSite()})
	}
	if r.streams >= maxRandomBlocks {
		return Stream{}, r.Step.Graph().Fail(&graph.Error{Op: "Generator", Err: fmt.Errorf("all %d streams are used", uint64(maxRandomBlocks)), Site: graph.CallerSite()})
	}
	s := Stream{Seed: r.seed, ID: uint32(r.streams)}
	r.streams++
	if r.updates == nil {
		r.updates = map[*graph.Node]*graph.Node{r.Step: Add(r.Step, r.Step.Graph().Scalar(1, graph.Float64))}
	}
	return s, nil
}

// Updates advances the step by one at each run: pass them, with any
// others, to compile.WithUpdates in every program that samples.
// compile.Compile refuses a program that samples without them, whose runs
// would all repeat the same values, unless compile.WithFixedDraws asks for
// that. It is nil before the first sample: take it after building the
// draws.
func (r *Generator) Updates() map[*graph.Node]*graph.Node {
	if r == nil {
		return nil
	}
	return r.updates
}

// draw builds a sampling node on a fresh stream.
func (r *Generator) draw(build func(Stream) *graph.Node) *graph.Node {
	s, failed := r.Stream()
	if failed != nil {
		return failed
	}
	return build(s)
}

// Uniform draws a tensor of the given dtype and shape, uniform on [0, 1).
func (r *Generator) Uniform(dtype tensor.Dtype, shape ...int) *graph.Node {
	return r.draw(func(s Stream) *graph.Node { return RandomUniform(r.Step, s, dtype, shape...) })
}

// Normal draws a tensor of standard normal values of the given dtype and
// shape.
func (r *Generator) Normal(dtype tensor.Dtype, shape ...int) *graph.Node {
	return r.draw(func(s Stream) *graph.Node { return RandomNormal(r.Step, s, dtype, shape...) })
}

// UniformLike draws a uniform tensor of x's dtype and shape (x's values
// are not read).
func (r *Generator) UniformLike(x *graph.Node) *graph.Node {
	return r.draw(func(s Stream) *graph.Node { return RandomUniformLike(r.Step, s, x) })
}

// NormalLike draws a standard normal tensor of x's dtype and shape (x's
// values are not read).
func (r *Generator) NormalLike(x *graph.Node) *graph.Node {
	return r.draw(func(s Stream) *graph.Node { return RandomNormalLike(r.Step, s, x) })
}

// Bernoulli draws a tensor of p's type whose elements are 1 with the
// probability p holds there, 0 otherwise (see RandomBernoulli).
func (r *Generator) Bernoulli(p *graph.Node) *graph.Node {
	return r.draw(func(s Stream) *graph.Node { return RandomBernoulli(r.Step, s, p) })
}

// Int draws integers uniform on [low, high) (see RandomInt).
func (r *Generator) Int(low, high int64, dtype tensor.Dtype, shape ...int) *graph.Node {
	return r.draw(func(s Stream) *graph.Node { return RandomInt(r.Step, s, low, high, dtype, shape...) })
}

// Permutation draws a permutation of 0, …, n−1 (see RandomPermutation).
func (r *Generator) Permutation(n int, dtype tensor.Dtype) *graph.Node {
	return r.draw(func(s Stream) *graph.Node { return RandomPermutation(r.Step, s, n, dtype) })
}

// Categorical draws a class index per row of logits, with probabilities
// softmax(row) (see RandomCategorical).
func (r *Generator) Categorical(logits *graph.Node) *graph.Node {
	return r.draw(func(s Stream) *graph.Node { return RandomCategorical(r.Step, s, logits) })
}
