package ops

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/parallel"
	"github.com/nabla-go/nabla/internal/kernel/race"
)

// sines returns a tensor whose element i is sin(0.37·i + seed), as
// testdata/conv_torch.py makes its inputs.
func sines(t testing.TB, dtype tensor.Dtype, seed float64, shape ...int) *tensor.Dense {
	v := make([]float64, graph.ShapeSize(shape))
	for i := range v {
		v[i] = math.Sin(0.37*float64(i) + seed)
	}
	return dense(t, dtype, shape, v...)
}

// convFixture is one case of testdata/conv_torch.json: PyTorch's output
// for inputs made by sines.
type convFixture struct {
	Name, Op string
	X, W     []int
	Options  ConvOptions
	Shape    []int
	Y        []float64
}

func (f convFixture) build(x, w *graph.Node) *graph.Node {
	switch f.Op {
	case "conv1d":
		return Conv1D(x, w, f.Options)
	case "conv_transpose2d":
		return ConvTranspose2D(x, w, f.Options)
	}
	return Conv2D(x, w, f.Options)
}

// readFixtures reads a JSON list of PyTorch fixtures, written by a script
// beside it in testdata, and checks that it holds at least least of them.
func readFixtures[F any](t *testing.T, path string, least int) []F {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []F
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < least {
		t.Fatalf("%s: %d fixtures, want at least %d", path, len(cases), least)
	}
	return cases
}

func TestConvMatchesPyTorch(t *testing.T) {
	cases := readFixtures[convFixture](t, "testdata/conv_torch.json", 10)
	for _, c := range cases {
		for _, dtype := range dtypes {
			g := graph.New()
			x, w := g.Input("x", dtype, c.X...), g.Input("w", dtype, c.W...)
			y := c.build(x, w)
			got := eval(t, y, map[*graph.Node]*tensor.Dense{x: sines(t, dtype, 0.1, c.X...), w: sines(t, dtype, 0.7, c.W...)})
			t.Run(c.Name+"/"+dtype.String(), func(t *testing.T) { assertValues(t, got, c.Shape, c.Y...) })
		}
	}
}

// naiveConv is Conv2D by its definition, in float64 over flat NCHW
// slices: g's sizes and settings.
func naiveConv(g geom, x, w []float64) []float64 {
	y := make([]float64, g.n*g.o*g.oh*g.ow)
	for n := range g.n {
		for o := range g.o {
			grp := o / g.og
			for i := range g.oh {
				for j := range g.ow {
					var s float64
					for c := range g.cg {
						for p := range g.kh {
							for q := range g.kw {
								ih := i*g.stride[0] - g.pad[0] + p*g.dilation[0]
								iw := j*g.stride[1] - g.pad[2] + q*g.dilation[1]
								if ih < 0 || ih >= g.h || iw < 0 || iw >= g.w {
									continue
								}
								s += x[((n*g.c+grp*g.cg+c)*g.h+ih)*g.w+iw] * w[((o*g.cg+c)*g.kh+p)*g.kw+q]
							}
						}
					}
					y[((n*g.o+o)*g.oh+i)*g.ow+j] = s
				}
			}
		}
	}
	return y
}

func randoms(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.Float64()*2 - 1
	}
	return v
}

func dot64(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestConvWideChunks checks the wide unfolding (conv_wide.go) where the
// images take several chunks, the last partial, with groups and dilation,
// against the definition, on one thread and on three.
func TestConvWideChunks(t *testing.T) {
	defer func(on bool) { convTaps = on }(convTaps)
	convTaps = false // by taps otherwise, where it runs
	rng := rand.New(rand.NewPCG(5, 6))
	pool := parallel.New(3)
	defer pool.Close()
	for _, c := range []struct {
		o      ConvOptions
		xs, ws []int
	}{
		{ConvOptions{}, []int{21, 6, 12, 12}, []int{16, 6, 5, 5}},                                 // LeNet's second
		{ConvOptions{Groups: 2, Dilation: []int{2, 1}}, []int{17, 16, 14, 11}, []int{6, 8, 3, 4}}, // groups, dilation
	} {
		geo, err := newConv2d(c.o, false).newGeom(c.xs, c.ws)
		if err != nil {
			t.Fatal(err)
		}
		if geo.forwardPath() != pathWide || geo.wideUnits() < 2 || geo.n%geo.wideImages() == 0 {
			t.Fatalf("x%v w%v: wide %v in %d chunks of %d images: want several, the last partial", c.xs, c.ws, geo.wide(), geo.wideUnits(), geo.wideImages())
		}
		x, w := randoms(rng, graph.ShapeSize(c.xs)), randoms(rng, graph.ShapeSize(c.ws))
		want := naiveConv(geo, x, w)
		for _, e := range []*graph.Exec{nil, graph.NewExec(pool)} {
			y := make([]float64, len(want))
			runConv(e, convForward, geo, x, w, y)
			for i := range y {
				if math.Abs(y[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
					t.Fatalf("x%v w%v: y[%d] = %v, want %v", c.xs, c.ws, i, y[i], want[i])
				}
			}
		}
	}
}

// A convolution of images without channels sums nothing: zeros, on every
// forward path and thread count (the wide unfolding divided by its empty
// size).
func TestConvWithoutInputChannels(t *testing.T) {
	defer func(on bool) { convTaps = on }(convTaps)
	pool := parallel.New(3)
	defer pool.Close()
	for _, taps := range []bool{true, false} {
		convTaps = taps
		for _, shapes := range [][2][]int{{{1, 0, 1, 2}, {1, 0, 1, 2}}, {{2, 0, 6, 5}, {3, 0, 3, 2}}} {
			geo, err := newConv2d(ConvOptions{}, false).newGeom(shapes[0], shapes[1])
			if err != nil {
				t.Fatal(err)
			}
			want := naiveConv(geo, nil, nil)
			for _, e := range []*graph.Exec{nil, graph.NewExec(pool)} {
				y := make([]float64, len(want))
				for i := range y {
					y[i] = math.NaN()
				}
				runConv(e, convForward, geo, nil, nil, y)
				for i := range y {
					if y[i] != 0 {
						t.Fatalf("taps %v, x%v w%v: y[%d] = %v, want 0", taps, shapes[0], shapes[1], i, y[i])
					}
				}
			}
		}
	}
}

// Random shapes and settings: Conv2D agrees with its definition, and its
// two gradients with the adjoint identities ⟨Conv2D(x,w), y⟩ =
// ⟨x, InputGrad(y,w)⟩ = ⟨w, WeightGrad(x,y)⟩, on one thread and on three.
func TestConvFamilyAgreesWithDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pool := parallel.New(3)
	defer pool.Close()
	checked := 0
	for it := range 200 {
		groups := 1 + rng.IntN(3)
		o := ConvOptions{
			Stride:   []int{1 + rng.IntN(3), 1 + rng.IntN(3)},
			Padding:  []int{rng.IntN(3), rng.IntN(2), rng.IntN(3), rng.IntN(2)},
			Dilation: []int{1 + rng.IntN(2), 1 + rng.IntN(2)},
			Groups:   groups,
		}
		if it%5 == 0 { // 1×1 kernels without padding unfold nothing
			o = ConvOptions{Groups: groups}
		}
		if it%5 == 1 { // without stride or padding, the unfolding copies runs
			o.Stride, o.Padding = nil, nil
		}
		kh, kw := 1+rng.IntN(3), 1+rng.IntN(3)
		if it%5 == 0 {
			kh, kw = 1, 1
		}
		xs := []int{1 + rng.IntN(4), groups * (1 + rng.IntN(3)), kh*2 + rng.IntN(8), kw*2 + rng.IntN(8)}
		ws := []int{groups * (1 + rng.IntN(3)), xs[1] / groups, kh, kw}
		geo, err := newConv2d(o, false).newGeom(xs, ws)
		if err != nil {
			continue
		}
		checked++
		x, w := randoms(rng, graph.ShapeSize(xs)), randoms(rng, graph.ShapeSize(ws))
		want := naiveConv(geo, x, w)
		gy := randoms(rng, len(want))
		for _, e := range []*graph.Exec{nil, graph.NewExec(pool)} {
			y := make([]float64, len(want))
			runConv(e, convForward, geo, x, w, y)
			for i := range y {
				if math.Abs(y[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
					t.Fatalf("%+v x%v w%v: y[%d] = %v, want %v", o, xs, ws, i, y[i], want[i])
				}
			}
			gx := make([]float64, len(x))
			runConv(e, convInputGrad, geo, gx, w, gy)
			gw := make([]float64, len(w))
			runConv(e, convWeightGrad, geo, x, gw, gy)
			ref := dot64(want, gy)
			for name, v := range map[string]float64{"input": dot64(x, gx), "weight": dot64(w, gw)} {
				if math.Abs(v-ref) > 1e-10*(1+math.Abs(ref)) {
					t.Fatalf("%+v x%v w%v: %s gradient: ⟨·,·⟩ = %v, want %v", o, xs, ws, name, v, ref)
				}
			}
		}
	}
	if checked < 150 {
		t.Fatalf("only %d of 200 random convolutions were valid", checked)
	}
}

// Padding wider than the input: some taps read no input at all (a
// length-1 sequence padded by 2 on each side for a kernel of 5, as
// PyTorch's Conv1d(padding=2) exports it).
func TestConvPaddingWiderThanInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		o      ConvOptions
		xs, ws []int
	}{
		{ConvOptions{Padding: []int{0, 0, 2, 2}}, []int{1, 2, 1, 1}, []int{3, 2, 1, 5}},
		{ConvOptions{Padding: []int{1, 1, 3, 3}}, []int{2, 1, 2, 1}, []int{2, 1, 3, 5}},
		{ConvOptions{Padding: []int{2, 2, 2, 2}, Dilation: []int{2, 1}}, []int{1, 1, 1, 2}, []int{1, 1, 3, 3}},
	}
	for _, c := range cases {
		geo, err := newConv2d(c.o, false).newGeom(c.xs, c.ws)
		if err != nil {
			t.Fatalf("%+v: %v", c.o, err)
		}
		x, w := randoms(rng, graph.ShapeSize(c.xs)), randoms(rng, graph.ShapeSize(c.ws))
		want := naiveConv(geo, x, w)
		y := make([]float64, len(want))
		runConv(nil, convForward, geo, x, w, y)
		for i := range y {
			if math.Abs(y[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Errorf("%+v x%v w%v: y[%d] = %v, want %v", c.o, c.xs, c.ws, i, y[i], want[i])
			}
		}
		gy := randoms(rng, len(want))
		gx, gw := make([]float64, len(x)), make([]float64, len(w))
		runConv(nil, convInputGrad, geo, gx, w, gy)
		runConv(nil, convWeightGrad, geo, x, gw, gy)
		ref := dot64(want, gy)
		for name, v := range map[string]float64{"input": dot64(x, gx), "weight": dot64(w, gw)} {
			if math.Abs(v-ref) > 1e-10*(1+math.Abs(ref)) {
				t.Errorf("%+v x%v w%v: %s gradient: ⟨·,·⟩ = %v, want %v", c.o, c.xs, c.ws, name, v, ref)
			}
		}
	}
}

func TestConvErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		x, w  []int
		build func(x, w *graph.Node) *graph.Node
		want  string
	}{
		{"rank", []int{3, 4, 5}, []int{2, 3, 3, 3}, func(x, w *graph.Node) *graph.Node { return Conv2D(x, w, ConvOptions{}) }, "want input (N,C,H,W)"},
		{"channels", []int{1, 4, 5, 5}, []int{2, 3, 3, 3}, func(x, w *graph.Node) *graph.Node { return Conv2D(x, w, ConvOptions{}) }, "do not fit 1 group"},
		{"too small", []int{1, 3, 2, 2}, []int{2, 3, 3, 3}, func(x, w *graph.Node) *graph.Node { return Conv2D(x, w, ConvOptions{}) }, "does not fit input"},
		{"stride", []int{1, 3, 5, 5}, []int{2, 3, 3, 3}, func(x, w *graph.Node) *graph.Node { return Conv2D(x, w, ConvOptions{Stride: []int{0}}) }, "stride [0]: must be at least 1"},
		{"same stride", []int{1, 3, 5, 5}, []int{2, 3, 3, 3}, func(x, w *graph.Node) *graph.Node {
			return Conv2D(x, w, ConvOptions{Same: true, Stride: []int{2}})
		}, "same padding needs stride 1"},
		{"padding", []int{1, 3, 5, 5}, []int{2, 3, 3, 3}, func(x, w *graph.Node) *graph.Node { return Conv2D(x, w, ConvOptions{Padding: []int{1, 2, 3}}) }, "want 1, 2 or 4 values"},
		{"output padding", []int{1, 3, 5, 5}, []int{3, 2, 3, 3}, func(x, w *graph.Node) *graph.Node {
			return ConvTranspose2D(x, w, ConvOptions{OutputPadding: []int{1}})
		}, "smaller than the stride"},
		{"conv1d rank", []int{1, 3, 5, 5}, []int{2, 3, 3}, func(x, w *graph.Node) *graph.Node { return Conv1D(x, w, ConvOptions{}) }, "want input (N,C,L)"},
	} {
		g := graph.New()
		c.build(g.Input("x", graph.Float64, c.x...), g.Input("w", graph.Float64, c.w...))
		err := g.Err()
		if err == nil || !containsAll(err.Error(), c.want, "conv_test.go") {
			t.Errorf("%s: error %v, want it to say %q and where", c.name, err, c.want)
		}
	}
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// A machine's convolutions allocate nothing once its buffers exist, on
// one thread or several.
func TestConvDoesNotAllocate(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop values: allocations are counted without it")
	}
	pool := parallel.New(2)
	defer pool.Close()
	for _, e := range []*graph.Exec{graph.NewExec(nil), graph.NewExec(pool)} {
		g := graph.New()
		x, w := g.Input("x", graph.Float32, 4, 3, 9, 9), g.Input("w", graph.Float32, 8, 3, 3, 3)
		y := Conv2D(x, w, ConvOptions{Padding: []int{1}, Stride: []int{2}})
		xv, wv := sines(t, graph.Float32, 0.1, 4, 3, 9, 9), sines(t, graph.Float32, 0.7, 8, 3, 3, 3)
		yv := graph.NewDenseOf(y.Type())
		ops := []struct {
			op  graph.ExecForwarder
			out *tensor.Dense
			in  []*tensor.Dense
		}{
			{y.Op().(graph.ExecForwarder), yv, []*tensor.Dense{xv, wv}},
			{convInputOp{conv2d: y.Op().(conv2DOp).conv2d, h: 9, w: 9}, graph.NewDenseOf(x.Type()), []*tensor.Dense{yv, wv}},
			{convWeightOp{conv2d: y.Op().(conv2DOp).conv2d, kh: 3, kw: 3}, graph.NewDenseOf(w.Type()), []*tensor.Dense{xv, yv}},
		}
		for _, c := range ops {
			run := func() {
				if err := c.op.ForwardExec(e, c.out, c.in); err != nil {
					t.Fatal(err)
				}
			}
			run()
			if n := testing.AllocsPerRun(10, run); n != 0 {
				t.Errorf("%T with %d threads: %v allocations per run", c.op, e.Threads(), n)
			}
		}
	}
}

// BenchmarkConv2D times a 64→64 3×3 convolution (padding 1) of 64 images
// of 32×32, float32, forward and its two gradients, in GFLOP/s (2 flops
// per multiply-add), on one thread and on all:
//
//	go test -run '^$' -bench Conv2D ./ops/
func BenchmarkConv2D(b *testing.B) {
	pool := parallel.New(2)
	defer pool.Close()
	for _, e := range []*graph.Exec{graph.NewExec(nil), graph.NewExec(pool)} {
		g := graph.New()
		x, w := g.Input("x", graph.Float32, 64, 64, 32, 32), g.Input("w", graph.Float32, 64, 64, 3, 3)
		o := ConvOptions{Padding: []int{1}}
		y := Conv2D(x, w, o)
		c := y.Op().(conv2DOp).conv2d
		xv, wv, yv := sines(b, graph.Float32, 0.1, 64, 64, 32, 32), sines(b, graph.Float32, 0.7, 64, 64, 3, 3), graph.NewDenseOf(y.Type())
		gx, gw := graph.NewDenseOf(x.Type()), graph.NewDenseOf(w.Type())
		flops := 2.0 * 64 * 64 * 32 * 32 * 64 * 9
		for _, k := range []struct {
			name string
			op   graph.ExecForwarder
			out  *tensor.Dense
			in   []*tensor.Dense
		}{
			{"forward", y.Op().(graph.ExecForwarder), yv, []*tensor.Dense{xv, wv}},
			{"input", convInputOp{conv2d: c, h: 32, w: 32}, gx, []*tensor.Dense{yv, wv}},
			{"weight", convWeightOp{conv2d: c, kh: 3, kw: 3}, gw, []*tensor.Dense{xv, yv}},
		} {
			b.Run(fmt.Sprintf("%s/threads=%d", k.name, e.Threads()), func(b *testing.B) {
				for range b.N {
					if err := k.op.ForwardExec(e, k.out, k.in); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// The weight gradient of a batch larger than its chunks agrees, entry by
// entry, with ⟨Conv2D(x, eₖ), g⟩ for each basis weight eₖ, and is the
// same, bit for bit, on one, two and three threads.
func TestConvWeightGradChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	xs, ws := []int{19, 2, 5, 6}, []int{3, 2, 3, 3}
	geo, err := newConv2d(ConvOptions{Padding: []int{1}}, false).newGeom(xs, ws)
	if err != nil {
		t.Fatal(err)
	}
	x := randoms(rng, graph.ShapeSize(xs))
	gy := randoms(rng, geo.n*geo.o*geo.oh*geo.ow)
	_, want := naiveGrads(geo, x, make([]float64, graph.ShapeSize(ws)), gy)
	var first []float64
	for threads := 1; threads <= 3; threads++ {
		pool := parallel.New(threads)
		gw := make([]float64, len(want))
		runConv(graph.NewExec(pool), convWeightGrad, geo, x, gw, gy)
		pool.Close()
		for k := range want {
			if math.Abs(gw[k]-want[k]) > 1e-12*(1+math.Abs(want[k])) {
				t.Fatalf("threads %d: [%d] = %v, want %v", threads, k, gw[k], want[k])
			}
		}
		if first == nil {
			first = gw
		}
		for k := range gw {
			if gw[k] != first[k] {
				t.Fatalf("threads %d: [%d] = %v, on one thread %v", threads, k, gw[k], first[k])
			}
		}
	}
}

// naiveGrads are Conv2D's gradients by their definition, for g's sizes:
// entry k of each is ⟨Conv2D(x, w), gy⟩ with the other operand fixed and
// this one the basis vector eₖ.
func naiveGrads(g geom, x, w, gy []float64) (gx, gw []float64) {
	basis := func(n, k int) []float64 {
		e := make([]float64, n)
		e[k] = 1
		return e
	}
	gx, gw = make([]float64, len(x)), make([]float64, len(w))
	for k := range gx {
		gx[k] = dot64(naiveConv(g, basis(len(x), k), w), gy)
	}
	for k := range gw {
		gw[k] = dot64(naiveConv(g, x, basis(len(w), k)), gy)
	}
	return gx, gw
}

// An empty batch, no input channels or no output channels: each kernel of
// the family writes its whole output (over NaNs left there), as its
// definition gives it; the weight gradient of no images is zero (it
// panicked), and an empty result unfolds nothing.
func TestConvEmptyBatchAndChannels(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pool := parallel.New(3)
	defer pool.Close()
	for _, c := range []struct {
		x, w []int
		o    ConvOptions
	}{
		{[]int{0, 3, 5, 5}, []int{2, 3, 3, 3}, ConvOptions{Padding: []int{1}}},
		{[]int{0, 3, 5, 5}, []int{2, 3, 1, 1}, ConvOptions{}}, // unfolds nothing
		{[]int{0, 4, 5, 5}, []int{4, 2, 3, 3}, ConvOptions{Groups: 2, Stride: []int{2}}},
		{[]int{2, 0, 5, 5}, []int{2, 0, 3, 3}, ConvOptions{Padding: []int{1}}},
		{[]int{2, 0, 5, 5}, []int{2, 0, 1, 1}, ConvOptions{}},
		{[]int{2, 3, 5, 5}, []int{0, 3, 3, 3}, ConvOptions{Padding: []int{1}}},
		{[]int{2, 3, 5, 5}, []int{0, 3, 1, 1}, ConvOptions{}},
		{[]int{0, 0, 5, 5}, []int{0, 0, 3, 3}, ConvOptions{}},
		// Columns for no image would take 9·2⁴⁰ elements: none are made.
		{[]int{0, 1, 1 << 20, 1 << 20}, []int{2, 1, 3, 3}, ConvOptions{Padding: []int{1}}},
	} {
		c2 := newConv2d(c.o, false)
		geo, err := c2.newGeom(c.x, c.w)
		if err != nil {
			t.Fatalf("x%v w%v: %v", c.x, c.w, err)
		}
		x, w := randoms(rng, graph.ShapeSize(c.x)), randoms(rng, graph.ShapeSize(c.w))
		ys := geo.out(convForward)
		gy := randoms(rng, graph.ShapeSize(ys))
		gx, gw := naiveGrads(geo, x, w, gy)
		for _, k := range []struct {
			op       graph.ExecForwarder
			in       [][]float64
			inShapes [][]int
			out      []int
			want     []float64
		}{
			{conv2DOp{c2}, [][]float64{x, w}, [][]int{c.x, c.w}, ys, naiveConv(geo, x, w)},
			{convInputOp{conv2d: c2, h: geo.h, w: geo.w}, [][]float64{gy, w}, [][]int{ys, c.w}, c.x, gx},
			{convWeightOp{conv2d: c2, kh: geo.kh, kw: geo.kw}, [][]float64{x, gy}, [][]int{c.x, ys}, c.w, gw},
		} {
			for _, e := range []*graph.Exec{nil, graph.NewExec(pool)} {
				name := fmt.Sprintf("%s x%v w%v %+v, %d threads", k.op.(graph.Op).Name(), c.x, c.w, c.o, e.Threads())
				in := []*tensor.Dense{dense(t, graph.Float64, k.inShapes[0], k.in[0]...), dense(t, graph.Float64, k.inShapes[1], k.in[1]...)}
				out := graph.NewDense(graph.Float64, k.out...)
				nans := out.Float64s()
				for i := range nans {
					nans[i] = math.NaN()
				}
				if err := k.op.ForwardExec(e, out, in); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for i, v := range graph.Float64s(out) {
					if math.Abs(v-k.want[i]) > 1e-12*(1+math.Abs(k.want[i])) || v != v {
						t.Errorf("%s: [%d] = %v, want %v", name, i, v, k.want[i])
					}
				}
			}
		}
	}
}
