package ops_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// runValues compiles outputs with updates, runs the program runs times on
// a machine of the given threads and returns each run's values of outputs.
func runValues(t *testing.T, outputs []*graph.Node, updates map[*graph.Node]*graph.Node, threads, runs int) [][][]float64 {
	t.Helper()
	prog, err := compile.Compile(outputs, compile.WithUpdates(updates))
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(prog, vm.WithThreads(threads))
	if err != nil {
		t.Fatal(err)
	}
	var all [][][]float64
	for range runs {
		if err := m.Run(nil); err != nil {
			t.Fatal(err)
		}
		var vals [][]float64
		for _, o := range outputs {
			v, err := m.Value(o)
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, graph.Float64s(v))
		}
		all = append(all, vals)
	}
	return all
}

// Two sampling nodes of one generator never share a stream, even with the
// same type (common-subexpression elimination must not merge them);
// successive runs draw fresh values; a fresh machine from the same seed
// replays the same sequence, on any number of threads.
func TestGeneratorStreamsAndRuns(t *testing.T) {
	build := func() ([]*graph.Node, map[*graph.Node]*graph.Node) {
		g := graph.New()
		gen := ops.NewGenerator(g, "rng", 42)
		a := gen.Normal(graph.Float32, 50_000)
		b := gen.Normal(graph.Float32, 50_000)
		return []*graph.Node{a, b}, gen.Updates()
	}
	outs, updates := build()
	runs := runValues(t, outs, updates, 1, 2)
	for r, vals := range runs {
		if shared := countEqual(vals[0], vals[1]); shared > 0 {
			t.Errorf("run %d: the two nodes share %d values", r, shared)
		}
	}
	if shared := countEqual(runs[0][0], runs[1][0]); shared > 0 {
		t.Errorf("two runs share %d values", shared)
	}
	outs, updates = build()
	again := runValues(t, outs, updates, 3, 2)
	for r := range runs {
		for i := range runs[r] {
			if !slices.Equal(runs[r][i], again[r][i]) {
				t.Errorf("run %d output %d: 3 threads from the same seed differ from 1", r, i)
			}
		}
	}
}

func countEqual(a, b []float64) int {
	n := 0
	for i := range a {
		if a[i] == b[i] {
			n++
		}
	}
	return n
}

// The step is a parameter the updates advance by one per run, so a
// machine's Get reads how many runs it has drawn for, and setting it back
// replays a run.
func TestGeneratorStepCountsRuns(t *testing.T) {
	g := graph.New()
	gen := ops.NewGenerator(g, "rng", 1)
	u := gen.Uniform(graph.Float64, 4)
	prog, err := compile.Compile([]*graph.Node{u}, compile.WithUpdates(gen.Updates()))
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(prog)
	if err != nil {
		t.Fatal(err)
	}
	var first []float64
	for r := range 3 {
		if err := m.Run(nil); err != nil {
			t.Fatal(err)
		}
		if r == 0 {
			v, _ := m.Value(u)
			first = slices.Clone(graph.Float64s(v))
		}
	}
	step, err := m.Get(gen.Step)
	if err != nil || graph.Float(step, 0) != 3 {
		t.Fatalf("step after 3 runs: got %v (%v), want 3", step, err)
	}
	if err := m.SetScalar(gen.Step, 0); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(nil); err != nil {
		t.Fatal(err)
	}
	v, _ := m.Value(u)
	if !slices.Equal(graph.Float64s(v), first) {
		t.Errorf("step 0 again: got %v, want %v", graph.Float64s(v), first)
	}
}

// A reparameterised sample μ + σ·ε carries gradients to μ and σ (d/dμ of
// Σ(μ + σ·ε) is the count, d/dσ is Σε), and the sampling op gives none to
// its step.
func TestReparameterisedSampleGradients(t *testing.T) {
	g := graph.New()
	gen := ops.NewGenerator(g, "rng", 7)
	mu := g.Param("mu", graph.NewDense(graph.Float64))
	sigma := g.Param("sigma", graph.NewDense(graph.Float64))
	eps := gen.Normal(graph.Float64, 5)
	loss := ops.Sum(ops.Add(mu, ops.Mul(sigma, eps)))
	grads, err := compile.Grad(loss, mu, sigma)
	if err != nil {
		t.Fatal(err)
	}
	vals := runValues(t, []*graph.Node{grads[0], grads[1], eps}, gen.Updates(), 1, 1)[0]
	sum := 0.0
	for _, e := range vals[2] {
		sum += e
	}
	if vals[0][0] != 5 || vals[1][0] != sum {
		t.Errorf("gradients: got %v, %v, want 5, %v", vals[0][0], vals[1][0], sum)
	}
	if _, err := compile.Grad(ops.Sum(eps), gen.Step); err == nil || !strings.Contains(err.Error(), `param "rng" #0 float64() has no gradient`) {
		t.Errorf("gradient with respect to the step: got %v, want an error naming it", err)
	}
}

// A nil generator gives an error, not a panic; Updates of an unused
// generator is empty.
func TestGeneratorMisuse(t *testing.T) {
	var gen *ops.Generator
	if n := gen.Normal(graph.Float64, 2); graph.Poisoned(n) == nil || !strings.Contains(n.Err().Error(), "nabla: Generator: the generator is nil: make one with ops.NewGenerator at random_generator_test.go:") {
		t.Errorf("nil generator: got %v", n.Err())
	}
	g := graph.New()
	if u := ops.NewGenerator(g, "rng", 0).Updates(); len(u) != 0 {
		t.Errorf("unused generator's updates: %v", slices.Collect(maps.Keys(u)))
	}
}

// BenchmarkRandomNormal measures float32 standard normals per second on
// one thread (the MB/s column is bytes of output per second of wall time,
// cpu-MB/s per second of the process's CPU time, which on a shared
// machine leaves out the time spent waiting for a core).
func BenchmarkRandomNormal(b *testing.B) { benchmarkRandomNormal(b, graph.Float32) }

// BenchmarkRandomNormal64 is BenchmarkRandomNormal for float64 normals.
func BenchmarkRandomNormal64(b *testing.B) { benchmarkRandomNormal(b, graph.Float64) }

func benchmarkRandomNormal(b *testing.B, dtype tensor.Dtype) {
	const n = 1 << 20
	size := int64(dtype.Size())
	g := graph.New()
	gen := ops.NewGenerator(g, "rng", 1)
	z := gen.Normal(dtype, n)
	prog, err := compile.Compile([]*graph.Node{z}, compile.WithUpdates(gen.Updates()))
	if err != nil {
		b.Fatal(err)
	}
	m, err := vm.New(prog, vm.WithThreads(1))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size * n)
	cpu0, ok := processCPU()
	for b.Loop() {
		if err := m.Run(nil); err != nil {
			b.Fatal(err)
		}
	}
	if cpu1, ok1 := processCPU(); ok && ok1 && cpu1 > cpu0 {
		b.ReportMetric(float64(size*n*int64(b.N))/(cpu1-cpu0).Seconds()/1e6, "cpu-MB/s")
	}
}

// A second generator with the seed of another on the same graph is an
// error (it would repeat the first one's streams); on another graph, or
// with another seed, it is not.
func TestGeneratorSeedsAreNotShared(t *testing.T) {
	g := graph.New()
	ops.NewGenerator(g, "rng", 5)
	ops.NewGenerator(g, "other", 6)
	ops.NewGenerator(graph.New(), "rng", 5)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	ops.NewGenerator(g, "again", 5)
	if err := g.Err(); err == nil || !strings.Contains(err.Error(), "nabla: NewGenerator: the graph already has a generator with seed 5, whose streams this one would repeat: use that generator, or another seed at random_generator_test.go:") {
		t.Errorf("got %v", err)
	}
}
