package ops

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/parallel"
	"github.com/nabla-go/nabla/internal/testkit/stattest"
)

// Philox-4x32-10 gives the known-answer vectors of Random123's
// kat_vectors (Salmon et al. 2011), also reproduced by an independent
// implementation of the paper's round function.
func TestPhiloxKnownAnswers(t *testing.T) {
	cases := []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{}, [2]uint32{}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0)}, [2]uint32{^uint32(0), ^uint32(0)},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	}
	for _, c := range cases {
		if got := philox4x32(c.ctr, c.key); got != c.want {
			t.Errorf("case %x/%x: got %08x, want %08x", c.ctr, c.key, got, c.want)
		}
	}
}

// drawRandom runs a random op's Forward at a step.
func drawRandom(t testing.TB, op randomOp, step float64) *tensor.Dense {
	t.Helper()
	out := graph.NewDense(op.dtype, op.shape...)
	if err := op.Forward(out, []*tensor.Dense{dense(t, graph.Float64, nil, step)}); err != nil {
		t.Fatal(err)
	}
	return out
}

// Each element comes from the counters the documentation names: element i
// of a float32 draw from word i mod 4 of block i/4, of a float64 draw from
// block i/2; the counter is (block, step low, step high, stream id) and
// the key the seed's halves. Checked against Philox called directly.
func TestRandomElementsFollowTheirCounters(t *testing.T) {
	s := Stream{Seed: 0x0123456789abcdef, ID: 7}
	step := uint64(1)<<32 + 5
	key := [2]uint32{0x89abcdef, 0x01234567}
	word := func(b, j int) uint32 {
		return philox4x32([4]uint32{uint32(b), 5, 1, 7}, key)[j]
	}
	u32 := drawRandom(t, randomOp{kind: uniformKind, s: s, dtype: graph.Float32, shape: []int{10}}, float64(step)).Float32s()
	n32 := drawRandom(t, randomOp{kind: normalKind, s: s, dtype: graph.Float32, shape: []int{10}}, float64(step)).Float32s()
	for i := range 10 {
		w := word(i/4, i%4)
		if want := float32(w>>8) / (1 << 24); u32[i] != want {
			t.Errorf("float32 uniform %d: got %v, want %v", i, u32[i], want)
		}
		pair := i &^ 1
		a, b := normalPair32(word(pair/4, pair%4), word(pair/4, pair%4+1))
		if want := []float32{a, b}[i%2]; n32[i] != want {
			t.Errorf("float32 normal %d: got %v, want %v", i, n32[i], want)
		}
	}
	n64 := drawRandom(t, randomOp{kind: normalKind, s: s, dtype: graph.Float64, shape: []int{3}}, float64(step)).Float64s()
	for i := range 3 {
		b := i / 2
		u := (float64((uint64(word(b, 0))<<32|uint64(word(b, 1)))>>11) + 0.5) / (1 << 53)
		v := (float64((uint64(word(b, 2))<<32|uint64(word(b, 3)))>>11) + 0.5) / (1 << 53)
		want := math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*v)
		if i%2 == 1 {
			want = math.Sqrt(-2*math.Log(u)) * math.Sin(2*math.Pi*v)
		}
		if n64[i] != want {
			t.Errorf("float64 normal %d: got %v, want %v", i, n64[i], want)
		}
	}
	u64 := drawRandom(t, randomOp{kind: uniformKind, s: s, dtype: graph.Float64, shape: []int{5}}, float64(step)).Float64s()
	for i := range 5 {
		x := uint64(word(i/2, 2*(i%2)))<<32 | uint64(word(i/2, 2*(i%2)+1))
		if want := float64(x>>11) / (1 << 53); u64[i] != want {
			t.Errorf("float64 uniform %d: got %v, want %v", i, u64[i], want)
		}
	}
}

// A draw computed on 1, 2 or 3 threads, with sizes below and above the
// split and a ragged last part, is Forward's draw bit for bit, and a
// shorter draw is a prefix of a longer one.
func TestRandomBitsDoNotDependOnThreads(t *testing.T) {
	pools := []*parallel.Pool{parallel.New(1), parallel.New(2), parallel.New(3)}
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	for _, dtype := range []tensor.Dtype{graph.Float32, graph.Float64} {
		for _, kind := range []randomKind{uniformKind, normalKind} {
			long := drawRandom(t, randomOp{kind: kind, s: Stream{Seed: 9, ID: 2}, dtype: dtype, shape: []int{parallelMin + 3*parallelChunk + 5}}, 11)
			for _, n := range []int{1, 3, 7, parallelMin - 1, parallelMin + 3*parallelChunk + 5} {
				op := randomOp{kind: kind, s: Stream{Seed: 9, ID: 2}, dtype: dtype, shape: []int{n}}
				want := drawRandom(t, op, 11)
				if !slices.Equal(graph.Float64s(want), graph.Float64s(long)[:n]) {
					t.Errorf("%v %v size %d: not a prefix of the longer draw", kind, dtype, n)
				}
				for _, p := range pools {
					got := graph.NewDense(dtype, n)
					if err := op.ForwardExec(graph.NewExec(p), got, []*tensor.Dense{dense(t, graph.Float64, nil, 11)}); err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(graph.Float64s(got), graph.Float64s(want)) {
						t.Errorf("%v %v size %d on %d threads: differs from Forward", kind, dtype, n, p.Threads())
					}
				}
			}
		}
	}
}

// moments returns the sample mean, variance, skewness and excess kurtosis.
func moments(x []float64) (mean, variance, skew, kurt float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var m2, m3, m4 float64
	for _, v := range x {
		d := v - mean
		m2 += d * d
		m3 += d * d * d
		m4 += d * d * d * d
	}
	n := float64(len(x))
	m2, m3, m4 = m2/n, m3/n, m4/n
	return mean, m2, m3 / math.Pow(m2, 1.5), m4/(m2*m2) - 3
}

// 10⁶ draws of each distribution and dtype have the moments of U(0, 1)
// and N(0, 1) within five standard errors (for n = 10⁶: mean 1e-3, variance
// 1.4e-3, skewness 2.4e-3, kurtosis 4.9e-3 for the normal; mean 2.9e-4 and
// variance 7.5e-5 for the uniform), and pass the Kolmogorov–Smirnov test
// at level 0.001 (√n·D < 1.95).
func TestRandomMomentsAndKS(t *testing.T) {
	const n = 1_000_000
	normalCDF := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	uniformCDF := func(x float64) float64 { return min(max(x, 0), 1) }
	for _, dtype := range []tensor.Dtype{graph.Float32, graph.Float64} {
		u := graph.Float64s(drawRandom(t, randomOp{kind: uniformKind, s: Stream{Seed: 1}, dtype: dtype, shape: []int{n}}, 0))
		mean, variance, skew, _ := moments(u)
		check := func(what string, got, want, tol float64) {
			t.Helper()
			if math.Abs(got-want) > tol {
				t.Errorf("%v %s: got %v, want %v ± %v", dtype, what, got, want, tol)
			}
		}
		check("uniform mean", mean, 0.5, 1.5e-3)
		check("uniform variance", variance, 1.0/12, 4e-4)
		check("uniform skewness", skew, 0, 1e-2)
		if slices.Min(u) < 0 || slices.Max(u) >= 1 {
			t.Errorf("%v uniform: values outside [0, 1): %v, %v", dtype, slices.Min(u), slices.Max(u))
		}
		ks := stattest.KS(u, uniformCDF)
		t.Logf("%v uniform: KS √n·D = %.3f, p = %.3f", dtype, ks, stattest.KolmogorovP(ks))
		check("uniform KS √n·D", ks, 0, 1.95)

		z := graph.Float64s(drawRandom(t, randomOp{kind: normalKind, s: Stream{Seed: 1, ID: 1}, dtype: dtype, shape: []int{n}}, 0))
		mean, variance, skew, kurt := moments(z)
		check("normal mean", mean, 0, 5e-3)
		check("normal variance", variance, 1, 7e-3)
		check("normal skewness", skew, 0, 1.2e-2)
		check("normal excess kurtosis", kurt, 0, 2.5e-2)
		// Neighbouring elements (a Box–Muller pair, and across blocks) are
		// uncorrelated: the lag-1 and lag-2 correlations are within five
		// standard errors (5e-3) of 0.
		for _, lag := range []int{1, 2} {
			c := 0.0
			for i := lag; i < n; i++ {
				c += z[i] * z[i-lag]
			}
			check(fmt.Sprintf("normal lag-%d correlation", lag), c/n, 0, 5e-3)
		}
		ks = stattest.KS(z, normalCDF)
		t.Logf("%v normal: KS √n·D = %.3f, p = %.3f", dtype, ks, stattest.KolmogorovP(ks))
		check("normal KS √n·D", ks, 0, 1.95)
	}
}

// Two streams, two steps and two seeds draw different values; the same
// stream and step the same ones.
func TestRandomStreamsAndStepsDiffer(t *testing.T) {
	draw := func(s Stream, step float64) []float64 {
		return graph.Float64s(drawRandom(t, randomOp{kind: uniformKind, s: s, dtype: graph.Float64, shape: []int{64}}, step))
	}
	base := draw(Stream{Seed: 5, ID: 1}, 3)
	if !slices.Equal(base, draw(Stream{Seed: 5, ID: 1}, 3)) {
		t.Fatal("the same stream and step drew different values")
	}
	for name, other := range map[string][]float64{
		"stream": draw(Stream{Seed: 5, ID: 2}, 3),
		"step":   draw(Stream{Seed: 5, ID: 1}, 4),
		"seed":   draw(Stream{Seed: 6, ID: 1}, 3),
	} {
		same := 0
		for i := range base {
			if base[i] == other[i] {
				same++
			}
		}
		if same > 0 {
			t.Errorf("another %s: %d of 64 values repeat", name, same)
		}
	}
}

// Bernoulli draws are 1 with the given probability: the frequency of each
// of p = 0, 0.1, 0.5, 0.9, 1 over 10⁵ draws is within five standard errors.
func TestRandomBernoulliFrequency(t *testing.T) {
	g := graph.New()
	const n = 100_000
	probs := []float64{0, 0.1, 0.5, 0.9, 1}
	vals := make([]float64, 0, n*len(probs))
	for _, p := range probs {
		for range n {
			vals = append(vals, p)
		}
	}
	p := g.Const(dense(t, graph.Float32, []int{len(probs), n}, vals...))
	got := graph.Float64s(eval(t, RandomBernoulli(g.Scalar(2, graph.Float64), Stream{Seed: 3}, p), nil))
	for k, want := range probs {
		sum := 0.0
		for _, v := range got[k*n : (k+1)*n] {
			if v != 0 && v != 1 {
				t.Fatalf("p = %v: value %v is not 0 or 1", want, v)
			}
			sum += v
		}
		if tol := 5 * math.Sqrt(want*(1-want)/n); math.Abs(sum/n-want) > tol {
			t.Errorf("p = %v: frequency %v, want within %v", want, sum/n, tol)
		}
	}
}

// Bad builds and bad steps are errors naming the op.
func TestRandomErrors(t *testing.T) {
	g := graph.New()
	RandomUniform(g.Const(dense(t, graph.Float64, []int{2}, 1, 2)), Stream{}, graph.Float64, 3)
	if err := g.Err(); err == nil || !strings.Contains(err.Error(), "RandomUniform: step must be a scalar, got float64(2)") {
		t.Errorf("vector step: got %v", err)
	}
	g = graph.New()
	RandomNormal(g.Scalar(0, graph.Float64), Stream{}, graph.Int64, 3)
	if err := g.Err(); err == nil || !strings.Contains(err.Error(), "RandomNormal: dtype int64 is not supported (float32 or float64)") {
		t.Errorf("integer dtype: got %v", err)
	}
	g = graph.New()
	RandomNormal(g.Scalar(0, graph.Float64), Stream{}, graph.Float32, 1<<20, 1<<15)
	if err := g.Err(); err == nil || !strings.Contains(err.Error(), "over the 17179869184 one stream draws at a step") {
		t.Errorf("too many elements: got %v", err)
	}
	for _, step := range []float64{-1, 0.5, math.NaN()} {
		out := graph.NewDense(graph.Float64, 2)
		err := randomOp{kind: uniformKind, dtype: graph.Float64, shape: []int{2}}.Forward(out, []*tensor.Dense{dense(t, graph.Float64, nil, step)})
		if err == nil || !strings.Contains(err.Error(), "is not a non-negative integer") {
			t.Errorf("step %v: got %v", step, err)
		}
	}
}

// The float32 Box–Muller pair is within 4 float32 ulps of the float64
// computation (relative to the radius, the pair's scale), for words at
// both ends of the range, quarter-turn boundaries and a sweep of others;
// log32 and sincosTurns32 alone are within 2 ulps.
func TestNormal32Accuracy(t *testing.T) {
	words := []uint32{0, 1, 2, 255, 256, 1 << 30, 1 << 31, 3 << 30, 0xfffffeff, 0xffffff00, 0xffffffff}
	for w := uint32(12345); w < 0xffff0000; w += 0x000fff71 {
		words = append(words, w)
	}
	ulp := func(x float64) float64 {
		return float64(math.Nextafter32(float32(math.Abs(x)), 2)) - float64(float32(math.Abs(x)))
	}
	var worstLog, worstTrig, worstPair float64
	for _, w0 := range words {
		u := float32(w0)*0x1p-32 + 0x1p-33
		want := math.Log(float64(u))
		worstLog = max(worstLog, math.Abs(float64(log32(u))-want)/ulp(want))
		for _, w1 := range words[:64] {
			v := float32(w1)*0x1p-32 + 0x1p-33
			s, c := sincosTurns32(v)
			ws, wc := math.Sincos(2 * math.Pi * float64(v))
			worstTrig = max(worstTrig, math.Abs(float64(s)-ws)/ulp(1), math.Abs(float64(c)-wc)/ulp(1))
			a, b := normalPair32(w0, w1)
			r := math.Sqrt(-2 * math.Log(float64(u)))
			worstPair = max(worstPair, math.Abs(float64(a)-r*wc)/ulp(r), math.Abs(float64(b)-r*ws)/ulp(r))
		}
	}
	t.Logf("worst errors: log %.2f ulp, sin/cos %.2f ulp of 1, pair %.2f ulp of r", worstLog, worstTrig, worstPair)
	if worstLog > 2 || worstTrig > 2 || worstPair > 4 {
		t.Errorf("worst errors: log %.2f ulp, sin/cos %.2f ulp of 1, pair %.2f ulp of r; want ≤ 2, 2, 4", worstLog, worstTrig, worstPair)
	}
}

// The seeds of a collected graph's generators are forgotten, so that
// building graph after graph holds no memory.
func TestGeneratorSeedsOfCollectedGraphsGo(t *testing.T) {
	count := func() int {
		seedsInUse.Lock()
		defer seedsInUse.Unlock()
		return len(seedsInUse.m)
	}
	before := count()
	for range 10 {
		NewGenerator(graph.New(), "rng", 1)
	}
	if count() < before+10 {
		t.Fatalf("got %d graphs with seeds, want at least %d", count(), before+10)
	}
	for range 100 {
		runtime.GC()
		if count() <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("after collection, %d graphs still hold seeds, want at most %d", count(), before)
}
