package ops

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/parallel"
)

// poolFixture is one case of testdata/pool_torch.json: PyTorch's output
// for an input made by sines (scaled by 3 for the activations).
type poolFixture struct {
	Name, Op string
	X        []int
	Options  PoolOptions
	Shape    []int
	Y        []float64
}

func (f poolFixture) build(x *graph.Node) *graph.Node {
	switch f.Op {
	case "max_pool2d":
		return MaxPool2D(x, f.Options)
	case "avg_pool2d":
		return AvgPool2D(x, f.Options)
	case "global_avg_pool2d":
		return GlobalAvgPool2D(x)
	case "erf":
		return Erf(x)
	case "gelu":
		return GELU(x, false)
	case "gelu_tanh":
		return GELU(x, true)
	case "silu":
		return SiLU(x)
	}
	return x.Graph().Fail(os.ErrInvalid)
}

func TestPoolingAndActivationsMatchPyTorch(t *testing.T) {
	cases := readFixtures[poolFixture](t, "testdata/pool_torch.json", 20)
	for _, c := range cases {
		scale := 3.0
		if strings.Contains(c.Op, "pool") {
			scale = 1
		}
		grad := c.Op == "max_pool2d_grad"
		v := make([]float64, graph.ShapeSize(c.X))
		for i := range v {
			v[i] = scale * math.Sin(0.37*float64(i)+0.1)
			if grad {
				v[i] = math.Floor(2*v[i]+0.5) / 2
			}
		}
		for _, dtype := range dtypes {
			g := graph.New()
			x := g.Input("x", dtype, c.X...)
			feeds := map[*graph.Node]*tensor.Dense{x: dense(t, dtype, c.X, v...)}
			var out *graph.Node
			if grad { // MaxPool2D's Backward, fed sines as the output's gradient
				y := MaxPool2D(x, c.Options)
				gy := g.Input("g", dtype, y.Shape()...)
				feeds[gy] = sines(t, dtype, 0.7, y.Shape()...)
				out = y.Op().(graph.Differentiable).Backward(graph.NewGradContext(y, []bool{true}), gy)[0]
			} else {
				out = c.build(x)
			}
			got := eval(t, out, feeds)
			t.Run(c.Name+"/"+dtype.String(), func(t *testing.T) { assertValues(t, got, c.Shape, c.Y...) })
		}
	}
}

// naivePool pools each plane of x by its definition over an explicitly
// padded plane: -∞ (max) or zeros (mean) around the image, and beyond
// that, for ceil mode's last windows, cells that do not count at all. It
// returns the pooled values and, for max pooling, each window's argmax
// in x (-1 when the window holds only padding).
func naivePool(g poolGeom, x []float64, isMax bool) (y []float64, at []int) {
	ph := (g.oh-1)*g.stride[0] + (g.kernel[0]-1)*g.dilation[0] + 1
	pw := (g.ow-1)*g.stride[1] + (g.kernel[1]-1)*g.dilation[1] + 1
	ph, pw = max(ph, g.h+2*g.pad[0]), max(pw, g.w+2*g.pad[1])
	type cell struct {
		v      float64
		src    int  // index in x, -1 in the padding
		counts bool // inside the padded image
	}
	for pl := range g.planes {
		padded := make([]cell, ph*pw)
		for r := range ph {
			for c := range pw {
				cl := cell{src: -1, counts: r < g.h+2*g.pad[0] && c < g.w+2*g.pad[1]}
				if isMax {
					cl.v = math.Inf(-1)
				}
				if i, j := r-g.pad[0], c-g.pad[1]; i >= 0 && i < g.h && j >= 0 && j < g.w {
					cl.src = (pl*g.h+i)*g.w + j
					cl.v = x[cl.src]
				}
				padded[r*pw+c] = cl
			}
		}
		for i := range g.oh {
			for j := range g.ow {
				best, arg, sum, n := math.Inf(-1), -1, 0.0, 0
				for p := range g.kernel[0] {
					for q := range g.kernel[1] {
						cl := padded[(i*g.stride[0]+p*g.dilation[0])*pw+j*g.stride[1]+q*g.dilation[1]]
						if cl.counts {
							sum += cl.v
							n++
						}
						if cl.src >= 0 && (arg < 0 || cl.v > best) {
							best, arg = cl.v, cl.src
						}
					}
				}
				if isMax {
					y = append(y, best)
					at = append(at, arg)
				} else {
					y = append(y, sum/float64(n))
				}
			}
		}
	}
	return y, at
}

// Random shapes and settings, on one thread and on three: the pooling
// kernels agree with naivePool, MaxPool2DGrad adds each output's gradient
// at naivePool's argmax, and each gradient kernel is the adjoint of its
// pooling: ⟨MaxPool2DGrad(x, g), G⟩ = ⟨g, MaxPool2DGather(x, G)⟩ and
// ⟨AvgPool2D(x), g⟩ = ⟨x, AvgPool2DSpread(g)⟩.
func TestPoolingAgreesWithDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	workers := parallel.New(3)
	defer workers.Close()
	checked := 0
	for it := range 300 {
		k := []int{1 + rng.IntN(3), 1 + rng.IntN(3)}
		o := PoolOptions{Kernel: k, Stride: []int{1 + rng.IntN(3), 1 + rng.IntN(3)},
			Padding: []int{rng.IntN(k[0]/2 + 1), rng.IntN(k[1]/2 + 1)}, CeilMode: rng.IntN(2) == 0}
		isMax := it%2 == 0
		if isMax {
			o.Dilation = []int{1 + rng.IntN(3), 1 + rng.IntN(2)}
		}
		xs := []int{1 + rng.IntN(3), 1 + rng.IntN(3), 1 + rng.IntN(9), 1 + rng.IntN(9)}
		if it%50 == 0 { // enough work to be split over the threads
			xs, o.Stride = []int{4, 8, 60 + rng.IntN(9), 60 + rng.IntN(9)}, []int{1}
		}
		geo, err := newPool2d(o, isMax).geomOf(xs)
		if err != nil {
			continue
		}
		checked++
		x := randoms(rng, graph.ShapeSize(xs))
		want, at := naivePool(geo, x, isMax)
		gy, gx := randoms(rng, len(want)), randoms(rng, len(x))
		for _, e := range []*graph.Exec{nil, graph.NewExec(workers)} {
			run := func(kind poolKind, out []float64, in ...[]float64) []float64 {
				ts := make([]*tensor.Dense, len(in))
				for i, v := range in {
					ts[i] = tensor.New(tensor.WithBacking(v))
				}
				runPool(e, kind, geo, tensor.New(tensor.WithBacking(out)), ts, floats[float64])
				return out
			}
			if !isMax {
				y := run(avgPoolKind, make([]float64, len(want)), x)
				closeTo(t, o, xs, "AvgPool2D", y, want)
				spread := run(avgPoolSpreadKind, make([]float64, len(x)), gy)
				adjoint(t, o, xs, "AvgPool2DSpread", dot64(y, gy), dot64(x, spread))
				continue
			}
			y := run(maxPoolKind, make([]float64, len(want)), x)
			closeTo(t, o, xs, "MaxPool2D", y, want)
			grad := run(maxPoolGradKind, make([]float64, len(x)), x, gy)
			wantGrad := make([]float64, len(x))
			for i, a := range at {
				if a >= 0 {
					wantGrad[a] += gy[i]
				}
			}
			closeTo(t, o, xs, "MaxPool2DGrad", grad, wantGrad)
			gather := run(maxPoolGatherKind, make([]float64, len(want)), x, gx)
			adjoint(t, o, xs, "MaxPool2DGather", dot64(grad, gx), dot64(gy, gather))
		}
	}
	if checked < 200 {
		t.Fatalf("only %d of 300 random poolings were valid", checked)
	}
}

func closeTo(t *testing.T, o PoolOptions, xs []int, name string, got, want []float64) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] && math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
			t.Fatalf("%s %+v x%v: [%d] = %v, want %v", name, o, xs, i, got[i], want[i])
		}
	}
}

func adjoint(t *testing.T, o PoolOptions, xs []int, name string, a, b float64) {
	t.Helper()
	if math.Abs(a-b) > 1e-10*(1+math.Abs(a)) {
		t.Fatalf("%s %+v x%v: ⟨·,·⟩ = %v, want %v", name, o, xs, b, a)
	}
}

// Ties go to the first maximum in row-major order, a NaN wins its
// window, and a window of -∞ sends its gradient to its first element, as
// in PyTorch.
func TestMaxPoolTiesAndSpecialValues(t *testing.T) {
	inf := math.Inf(-1)
	for _, c := range []struct {
		name       string
		x          []float64
		y          float64
		wantGradAt int
	}{
		{"tie", []float64{1, 2, 2, 0}, 2, 1},
		{"all equal", []float64{3, 3, 3, 3}, 3, 0},
		{"NaN", []float64{1, math.NaN(), 5, 0}, math.NaN(), 1},
		{"-inf", []float64{inf, inf, inf, inf}, inf, 0},
	} {
		g := graph.New()
		x := g.Input("x", graph.Float64, 1, 1, 2, 2)
		y := MaxPool2D(x, PoolOptions{Kernel: []int{2}})
		gy := g.Input("g", graph.Float64, 1, 1, 1, 1)
		grad := graph.Apply(poolOp{kind: maxPoolGradKind, pool2d: y.Op().(poolOp).pool2d}, x, gy)
		feeds := map[*graph.Node]*tensor.Dense{x: dense(t, graph.Float64, []int{1, 1, 2, 2}, c.x...), gy: dense(t, graph.Float64, []int{1, 1, 1, 1}, 1)}
		assertValues(t, eval(t, y, feeds), []int{1, 1, 1, 1}, c.y)
		want := make([]float64, 4)
		want[c.wantGradAt] = 1
		assertValues(t, eval(t, grad, feeds), []int{1, 1, 2, 2}, want...)
	}
}

func TestPoolErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		x     []int
		build func(x *graph.Node) *graph.Node
		want  string
	}{
		{"rank", []int{3, 4, 5}, func(x *graph.Node) *graph.Node { return MaxPool2D(x, PoolOptions{Kernel: []int{2}}) }, "want images (N,C,H,W)"},
		{"no kernel", []int{1, 1, 4, 4}, func(x *graph.Node) *graph.Node { return MaxPool2D(x, PoolOptions{}) }, "no kernel size"},
		{"stride", []int{1, 1, 4, 4}, func(x *graph.Node) *graph.Node {
			return AvgPool2D(x, PoolOptions{Kernel: []int{2}, Stride: []int{0}})
		}, "stride [0]: must be at least 1"},
		{"padding", []int{1, 1, 4, 4}, func(x *graph.Node) *graph.Node {
			return MaxPool2D(x, PoolOptions{Kernel: []int{2}, Padding: []int{2}})
		}, "at most half the kernel"},
		{"padding values", []int{1, 1, 4, 4}, func(x *graph.Node) *graph.Node {
			return MaxPool2D(x, PoolOptions{Kernel: []int{2}, Padding: []int{0, 1, 0, 1}})
		}, "want 1 or 2 values"},
		{"avg dilation", []int{1, 1, 4, 4}, func(x *graph.Node) *graph.Node {
			return AvgPool2D(x, PoolOptions{Kernel: []int{2}, Dilation: []int{2}})
		}, "average pooling has none"},
		{"too small", []int{1, 1, 2, 5}, func(x *graph.Node) *graph.Node { return MaxPool2D(x, PoolOptions{Kernel: []int{3}}) }, "does not fit"},
		{"global rank", []int{2, 3}, GlobalAvgPool2D, "want images (N,C,H,W)"},
		{"gradient shape", []int{1, 1, 4, 4}, func(x *graph.Node) *graph.Node {
			return graph.Apply(poolOp{kind: maxPoolGradKind, pool2d: newPool2d(PoolOptions{Kernel: []int{2}}, true)}, x, x)
		}, "(1,1,4,4) does not fit the pooling of (1,1,4,4): want (1,1,2,2)"},
		{"flatten axis", []int{2, 3}, func(x *graph.Node) *graph.Node { return Flatten(x, 2) }, "start axis in [-2, 2)"},
	} {
		g := graph.New()
		c.build(g.Input("x", graph.Float64, c.x...))
		err := g.Err()
		if err == nil || !containsAll(err.Error(), c.want, "pool_test.go") {
			t.Errorf("%s: error %v, want it to say %q and where", c.name, err, c.want)
		}
	}
}

// A machine's pooling kernels allocate nothing once their state exists,
// on one thread or several.
func TestPoolDoesNotAllocate(t *testing.T) {
	workers := parallel.New(2)
	defer workers.Close()
	for _, e := range []*graph.Exec{graph.NewExec(nil), graph.NewExec(workers)} {
		for _, dtype := range dtypes {
			xs := []int{4, 8, 30, 30}
			o := PoolOptions{Kernel: []int{3}, Stride: []int{2}, Padding: []int{1}}
			g := graph.New()
			x := g.Input("x", dtype, xs...)
			y := MaxPool2D(x, o)
			xv, yv, gx := sines(t, dtype, 0.1, xs...), graph.NewDenseOf(y.Type()), graph.NewDenseOf(x.Type())
			mp := y.Op().(poolOp)
			avg := AvgPool2D(x, o).Op().(poolOp)
			spread := avg
			spread.kind, spread.h, spread.w = avgPoolSpreadKind, 30, 30
			grad, gather := mp, mp
			grad.kind, gather.kind = maxPoolGradKind, maxPoolGatherKind
			for _, c := range []struct {
				op  poolOp
				out *tensor.Dense
				in  []*tensor.Dense
			}{
				{mp, yv, []*tensor.Dense{xv}},
				{grad, gx, []*tensor.Dense{xv, yv}},
				{gather, yv, []*tensor.Dense{xv, gx}},
				{avg, yv, []*tensor.Dense{xv}},
				{spread, gx, []*tensor.Dense{yv}},
			} {
				run := func() {
					if err := c.op.ForwardExec(e, c.out, c.in); err != nil {
						t.Fatal(err)
					}
				}
				run()
				if n := testing.AllocsPerRun(10, run); n != 0 {
					t.Errorf("%s %v with %d threads: %v allocations per run", c.op.Name(), dtype, e.Threads(), n)
				}
			}
		}
	}
}

// Pooling as in a LeNet-style network: 2×2 windows over a batch of 64
// images of 32 channels 26×26, float32, on one thread.
func BenchmarkPool(b *testing.B) {
	xs := []int{64, 32, 26, 26}
	o := PoolOptions{Kernel: []int{2}}
	g := graph.New()
	x := g.Input("x", graph.Float32, xs...)
	mp, avg := MaxPool2D(x, o), AvgPool2D(x, o)
	xv, yv, gx := sines(b, graph.Float32, 0.1, xs...), graph.NewDenseOf(mp.Type()), graph.NewDenseOf(x.Type())
	grad := mp.Op().(poolOp)
	grad.kind = maxPoolGradKind
	spread := avg.Op().(poolOp)
	spread.kind, spread.h, spread.w = avgPoolSpreadKind, xs[2], xs[3]
	e := graph.NewExec(nil)
	for _, c := range []struct {
		op  poolOp
		out *tensor.Dense
		in  []*tensor.Dense
	}{
		{mp.Op().(poolOp), yv, []*tensor.Dense{xv}},
		{grad, gx, []*tensor.Dense{xv, yv}},
		{avg.Op().(poolOp), yv, []*tensor.Dense{xv}},
		{spread, gx, []*tensor.Dense{yv}},
	} {
		b.Run(c.op.Name(), func(b *testing.B) {
			for b.Loop() {
				if err := c.op.ForwardExec(e, c.out, c.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// 2×2 max pooling at stride 2 (maxHalves) on values full of ties, signed
// zeros, infinities and NaNs, in both float types: the pooled value, the
// gradient and the gather follow each window's argmax as the reference
// finds it from its four taps in row-major order (the last NaN, else the
// first maximum). Rows up to 41 wide take the vector kernel's full
// vectors and partial ones (MaxPool2D's, maxHalvesVector).
func TestMaxPoolHalves(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	values := []float64{-1, 0, math.Copysign(0, -1), 1, 2, math.Inf(1), math.Inf(-1)}
	for it := range 200 {
		xs := []int{1 + rng.IntN(2), 1 + rng.IntN(3), 2 + rng.IntN(8), 2 + rng.IntN(40)}
		o := PoolOptions{Kernel: []int{2}, CeilMode: it%3 == 0}
		geo, err := newPool2d(o, true).geomOf(xs)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float64, graph.ShapeSize(xs))
		for i := range x {
			x[i] = values[rng.IntN(len(values))]
			if it%4 == 1 && rng.IntN(20) == 0 {
				x[i] = math.NaN()
			}
		}
		want := halvesArgmax(geo, x)
		gy, gx := randoms(rng, len(want)), randoms(rng, len(x))
		checkHalves[float32](t, it, geo, x, gy, gx, want)
		checkHalves[float64](t, it, geo, x, gy, gx, want)
	}
}

// halvesArgmax is the argmax of each window of a 2×2 pooling at stride
// 2, -1 where the window reaches out of the image (ceil mode).
func halvesArgmax(g poolGeom, x []float64) []int {
	var at []int
	for pl := range g.planes {
		for i := range g.oh {
			for j := range g.ow {
				arg, nan := -1, false
				for p := range 2 {
					for q := range 2 {
						r, c := 2*i+p, 2*j+q
						if r >= g.h || c >= g.w {
							continue
						}
						k := (pl*g.h+r)*g.w + c
						switch v := x[k]; {
						case math.IsNaN(v):
							arg, nan = k, true
						case !nan && (arg < 0 || v > x[arg]):
							arg = k
						}
					}
				}
				at = append(at, arg)
			}
		}
	}
	return at
}

func checkHalves[T float](t *testing.T, it int, g poolGeom, x, gy, gx []float64, at []int) {
	t.Helper()
	conv := func(v []float64) []T {
		r := make([]T, len(v))
		for i := range v {
			r[i] = T(v[i])
		}
		return r
	}
	workers := parallel.New(2)
	defer workers.Close()
	for _, e := range []*graph.Exec{nil, graph.NewExec(workers)} {
		run := func(kind poolKind, n int, in ...[]T) []T {
			ts := make([]*tensor.Dense, len(in))
			for i, v := range in {
				ts[i] = tensor.New(tensor.WithBacking(v))
			}
			out := make([]T, n)
			for i := range out {
				out[i] = 7 // the kernels must write every element
			}
			runPool(e, kind, g, tensor.New(tensor.WithBacking(out)), ts, floats[T])
			return out
		}
		same := func(name string, i int, got T, want float64) {
			// Bit for bit, so that a signed zero from the wrong tap shows.
			if w := T(want); math.Float64bits(float64(got)) != math.Float64bits(float64(w)) && !(got != got && w != w) {
				t.Fatalf("case %d %T %s [%d]: got %v, want %v", it, got, name, i, got, w)
			}
		}
		y := run(maxPoolKind, len(at), conv(x))
		grad := run(maxPoolGradKind, len(x), conv(x), conv(gy))
		gather := run(maxPoolGatherKind, len(at), conv(x), conv(gx))
		wantGrad := make([]float64, len(x))
		for o, a := range at {
			want, wantG := math.Inf(-1), 0.0
			if a >= 0 {
				want, wantG = x[a], gx[a]
				wantGrad[a] += gy[o]
			}
			same("MaxPool2D", o, y[o], want)
			same("MaxPool2DGather", o, gather[o], wantG)
		}
		for i := range x {
			same("MaxPool2DGrad", i, grad[i], wantGrad[i])
		}
	}
}
