package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

func matMulT(transA, transB bool) func(xs ...*graph.Node) *graph.Node {
	return func(xs ...*graph.Node) *graph.Node { return MatMulT(xs[0], xs[1], transA, transB) }
}

func TestMatMul(t *testing.T) {
	// [[1,2,3],[4,5,6]]·[[7,8],[9,10],[11,12]] = [[1·7+2·9+3·11, 1·8+2·10+3·12],
	// [4·7+5·9+6·11, 4·8+5·10+6·12]] = [[58,64],[139,154]]
	a, aT := of([]int{2, 3}, 1, 2, 3, 4, 5, 6), of([]int{3, 2}, 1, 4, 2, 5, 3, 6)
	b, bT := of([]int{3, 2}, 7, 8, 9, 10, 11, 12), of([]int{2, 3}, 7, 9, 11, 8, 10, 12)
	product := []float64{58, 64, 139, 154}
	runForward(t, []forwardCase{
		{"2-D", []values{a, b}, matMulT(false, false), []int{2, 2}, product},
		{"2-D transA", []values{aT, b}, matMulT(true, false), []int{2, 2}, product},
		{"2-D transB", []values{a, bT}, matMulT(false, true), []int{2, 2}, product},
		{"2-D transA transB", []values{aT, bT}, matMulT(true, true), []int{2, 2}, product},
		// [1,2]·[5,6]ᵀ = 17, [3,4]·[7,8]ᵀ = 21+32 = 53
		{"3-D", []values{arange(2, 1, 2).plus(1), arange(2, 2, 1).plus(5)}, matMulT(false, false), []int{2, 1, 1},
			[]float64{17, 53}},
		// [[1,2],[3,4]]ᵀ per batch; batch 0: [[1,3],[2,4]]·[[5],[6]] = [23,34]
		// batch 1: [[5,7],[6,8]]·[[7],[8]] = [91,106]
		{"3-D transA", []values{arange(2, 2, 2).plus(1), arange(2, 2, 1).plus(5)}, matMulT(true, false), []int{2, 2, 1},
			[]float64{23, 34, 91, 106}},
		// [1,2]·[[1,0],[1,1]] = [3,2], [3,4]·... = [7,4]
		{"3-D by 2-D", []values{arange(2, 1, 2).plus(1), of([]int{2, 2}, 1, 0, 1, 1)}, matMulT(false, false),
			[]int{2, 1, 2}, []float64{3, 2, 7, 4}},
		{"3-D by 2-D transA", []values{arange(2, 2, 1).plus(1), of([]int{2, 2}, 1, 0, 1, 1)}, matMulT(true, false),
			[]int{2, 1, 2}, []float64{3, 2, 7, 4}},
		// [[1,0],[1,1]]ᵀ = [[1,1],[0,1]]: [1,2] → [3,2], [3,4] → [7,4]
		{"3-D by 2-D transB", []values{arange(2, 1, 2).plus(1), of([]int{2, 2}, 1, 1, 0, 1)}, matMulT(false, true),
			[]int{2, 1, 2}, []float64{3, 2, 7, 4}},
		// [1,2]·[5,6]ᵀ = 17, [1,2]·[7,8]ᵀ = 23
		{"2-D by 3-D", []values{arange(1, 2).plus(1), arange(2, 2, 1).plus(5)}, matMulT(false, false), []int{2, 1, 1},
			[]float64{17, 23}},
		{"2-D by 3-D transB", []values{arange(1, 2).plus(1), arange(2, 1, 2).plus(5)}, matMulT(false, true),
			[]int{2, 1, 1}, []float64{17, 23}},
		// 1·4+2·5+3·6 = 32
		{"(1,3)·(3,1)", []values{arange(1, 3).plus(1), arange(3, 1).plus(4)}, matMulT(false, false), []int{1, 1},
			[]float64{32}},
		{"k = 0", []values{arange(2, 0), arange(0, 3)}, matMulT(false, false), []int{2, 3}, []float64{0, 0, 0, 0, 0, 0}},
		{"m = 0", []values{arange(0, 3), arange(3, 2)}, matMulT(false, false), []int{0, 2}, nil},
		{"batch 0", []values{arange(0, 2, 2), arange(0, 2, 2)}, matMulT(false, false), []int{0, 2, 2}, nil},
	})
}

func TestMatMulErrors(t *testing.T) {
	runErrors(t, []errorCase{
		{"misaligned", func(g *graph.Graph) *graph.Node { return MatMul(f64(g, 64, 784), f64(g, 256, 784)) }, "MatMul",
			[]string{"nabla: MatMul: shapes (64,784) and (256,784) do not align (784 != 256)"}},
		{"misaligned transB", func(g *graph.Graph) *graph.Node {
			return MatMulT(f64(g, 64, 784), f64(g, 784, 256), false, true)
		}, "MatMul", []string{"shapes (64,784) and (784,256) do not align (784 != 256)"}},
		{"batches differ", func(g *graph.Graph) *graph.Node { return MatMul(f64(g, 3, 2, 2), f64(g, 4, 2, 2)) }, "MatMul",
			[]string{"shapes (3,2,2) and (4,2,2): batch sizes differ (3 != 4)"}},
		{"vector", func(g *graph.Graph) *graph.Node { return MatMul(f64(g, 3), f64(g, 3, 2)) }, "MatMul",
			[]string{"shapes (3) and (3,2): ranks 1 and 2 are not supported"}},
		{"rank 4", func(g *graph.Graph) *graph.Node { return MatMul(f64(g, 1, 2, 2, 2), f64(g, 2, 2)) }, "MatMul",
			[]string{"ranks 4 and 2 are not supported"}},
		{"dtypes", func(g *graph.Graph) *graph.Node {
			return MatMul(f64(g, 2, 2), g.Input("y", graph.Float32, 2, 2))
		}, "MatMul", []string{"dtypes differ: float64(2,2) and float32(2,2)"}},
		{"arity", func(g *graph.Graph) *graph.Node { return graph.Apply(MatMulOp{}, f64(g, 2, 2)) }, "MatMul",
			[]string{"takes 2 inputs, got 1"}},
	})
}

// mmGeometry is a product of batchA·(m,k) by batchB·(k,n) matrices; a batch
// of -1 is a 2-D operand.
type mmGeometry struct{ batchA, batchB, m, k, n int }

// TestMatMulAgainstLoops compares products with plain loops, for every
// transposition: small ones of every combination of ranks and of sizes 0,
// 1 and 2, and large ones that are blocked.
func TestMatMulAgainstLoops(t *testing.T) {
	geometries := []mmGeometry{
		{-1, -1, 70, 300, 270}, {-1, -1, 300, 100, 70}, {-1, -1, 20, 150, 600},
		{3, -1, 40, 100, 90}, {-1, 2, 30, 100, 200}, {2, 2, 100, 50, 80},
	}
	for _, batches := range [][2]int{{-1, -1}, {0, 0}, {1, 1}, {2, 2}, {0, -1}, {2, -1}, {-1, 0}, {-1, 2}} {
		for size := range 27 {
			geometries = append(geometries, mmGeometry{batches[0], batches[1], size / 9, size / 3 % 3, size % 3})
		}
	}
	r := rand.New(rand.NewPCG(3, 3))
	for _, geo := range geometries {
		for _, flags := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, dtype := range dtypes {
				name := fmt.Sprintf("%+v trans %v %v %v", geo, flags[0], flags[1], dtype)
				a := randomValues(r, matrixShape(geo.batchA, geo.m, geo.k, flags[0])...)
				b := randomValues(r, matrixShape(geo.batchB, geo.k, geo.n, flags[1])...)
				g := graph.New()
				y := MatMulT(g.Const(dense(t, dtype, a.shape, a.vals...)), g.Const(dense(t, dtype, b.shape, b.vals...)),
					flags[0], flags[1])
				got := eval(t, y, nil)
				batch := max(geo.batchA, geo.batchB)
				if want := matrixShape(batch, geo.m, geo.n, false); !slices.Equal(got.Shape(), want) {
					t.Fatalf("case %v: got shape %v, want %v", name, got.Shape(), want)
				}
				tol := 1e-12 * float64(geo.k)
				if dtype == graph.Float32 {
					tol = 1e-6 * float64(geo.k)
				}
				vals := graph.Float64s(got)
				products := batch
				if batch < 0 {
					products = 1
				}
				for p := range products {
					for i := range geo.m {
						for j := range geo.n {
							want := 0.0
							for l := range geo.k {
								want += matrixAt(a, geo.batchA >= 0, p, flags[0], i, l) *
									matrixAt(b, geo.batchB >= 0, p, flags[1], l, j)
							}
							if v := vals[(p*geo.m+i)*geo.n+j]; math.Abs(v-want) > tol {
								t.Fatalf("case %v [%d,%d,%d]: got %v, want %v", name, p, i, j, v, want)
							}
						}
					}
				}
			}
		}
	}
}

// matrixShape is the stored shape of a batch (-1: none) of rows×cols
// matrices, transposed or not.
func matrixShape(batch, rows, cols int, trans bool) []int {
	if trans {
		rows, cols = cols, rows
	}
	if batch < 0 {
		return []int{rows, cols}
	}
	return []int{batch, rows, cols}
}

// matrixAt is element (i,j) of matrix p of v (of its only matrix if v is
// not batched), or of its transpose.
func matrixAt(v values, batched bool, p int, trans bool, i, j int) float64 {
	rows, cols := v.shape[len(v.shape)-2], v.shape[len(v.shape)-1]
	if !batched {
		p = 0
	}
	if trans {
		i, j = j, i
	}
	return v.vals[p*rows*cols+i*cols+j]
}

func TestMatMulBackward(t *testing.T) {
	var cases []backwardCase
	for _, flags := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		shapes := func(a, b []int) [][]int {
			// a and b are given untransposed: swap the last two axes where
			// the op transposes.
			swap := func(s []int, t bool) []int {
				s = append([]int(nil), s...)
				if t {
					s[len(s)-1], s[len(s)-2] = s[len(s)-2], s[len(s)-1]
				}
				return s
			}
			return [][]int{swap(a, flags[0]), swap(b, flags[1])}
		}
		name := fmt.Sprintf(" trans %v %v", flags[0], flags[1])
		build := matMulT(flags[0], flags[1])
		cases = append(cases,
			backwardCase{"2-D" + name, shapes([]int{2, 3}, []int{3, 4}), build},
			backwardCase{"3-D" + name, shapes([]int{2, 3, 2}, []int{2, 2, 3}), build},
			backwardCase{"3-D by 2-D" + name, shapes([]int{2, 3, 2}, []int{2, 3}), build},
			backwardCase{"2-D by 3-D" + name, shapes([]int{3, 2}, []int{2, 2, 3}), build},
			backwardCase{"(1,1)·(1,1)" + name, shapes([]int{1, 1}, []int{1, 1}), build},
			backwardCase{"3-D by 2-D, k = 0" + name, shapes([]int{2, 3, 0}, []int{0, 2}), build},
			backwardCase{"3-D by 2-D, m = 0" + name, shapes([]int{2, 0, 3}, []int{3, 2}), build},
		)
	}
	runBackward(t, cases)
}

// TestMatMulNeedsGrad checks that Backward builds only the gradients asked for.
func TestMatMulNeedsGrad(t *testing.T) {
	g := graph.New()
	a, b := f64(g, 2, 3), f64(g, 3, 4)
	y := MatMul(a, b)
	for i, needs := range [][]bool{{true, false}, {false, true}} {
		grads := MatMulOp{}.Backward(graph.NewGradContext(y, needs), g.Const(graph.NewDense(graph.Float64, 2, 4)))
		for j, gr := range grads {
			if (gr != nil) != needs[j] {
				t.Errorf("case %d: gradient %d: got %v, want one: %v", i, j, gr, needs[j])
			}
		}
	}
}

// matMulOperands returns the inputs of a 64x784·784x256 product in dtype.
func matMulOperands(tb testing.TB, dtype tensor.Dtype) (out *tensor.Dense, in []*tensor.Dense) {
	r := rand.New(rand.NewPCG(5, 5))
	a, b := randomValues(r, 64, 784), randomValues(r, 784, 256)
	return graph.NewDense(dtype, 64, 256), []*tensor.Dense{dense(tb, dtype, a.shape, a.vals...), dense(tb, dtype, b.shape, b.vals...)}
}

func benchmarkMatMul(b *testing.B, dtype tensor.Dtype) {
	out, in := matMulOperands(b, dtype)
	b.ReportAllocs()
	for b.Loop() {
		if err := (MatMulOp{}).Forward(out, in); err != nil {
			b.Fatal(err)
		}
	}
}

// matMulAllocCases are products of every layout the kernel handles, built
// from a (64,32) input: 2-D with each transposition, batched 3-D, 3-D·2-D
// (one product, and per batch when A is transposed), 2-D·3-D (of matrices,
// and of columns, one product), and products
// with one row or one column.
var matMulAllocCases = []allocsCase{
	{"2-D", func(x *graph.Node) *graph.Node { return MatMul(x, Reshape(x, 32, 64)) }},
	{"2-D transA", func(x *graph.Node) *graph.Node { return MatMulT(x, x, true, false) }},
	{"2-D transB", func(x *graph.Node) *graph.Node { return MatMulT(x, x, false, true) }},
	{"2-D transA transB", func(x *graph.Node) *graph.Node { return MatMulT(x, Reshape(x, 32, 64), true, true) }},
	{"3-D", func(x *graph.Node) *graph.Node { return MatMul(Reshape(x, 2, 32, 32), Reshape(x, 2, 32, 32)) }},
	{"3-D by 2-D", func(x *graph.Node) *graph.Node { return MatMul(Reshape(x, 2, 32, 32), Reshape(x, 32, 64)) }},
	{"3-D by 2-D transA", func(x *graph.Node) *graph.Node {
		return MatMulT(Reshape(x, 2, 32, 32), Reshape(x, 32, 64), true, false)
	}},
	{"2-D by 3-D", func(x *graph.Node) *graph.Node { return MatMul(Reshape(x, 32, 64), Reshape(x, 2, 64, 16)) }},
	{"2-D by a batch of columns", func(x *graph.Node) *graph.Node { return MatMul(Reshape(x, 32, 64), Reshape(x, 32, 64, 1)) }},
	{"row by matrix", func(x *graph.Node) *graph.Node { return MatMul(Reshape(Sum(x, 1), 1, 64), x) }},
	{"matrix by column", func(x *graph.Node) *graph.Node { return MatMul(x, Reshape(Sum(x, 0), 32, 1)) }},
}

// TestMatMulForwardAllocs checks that no layout allocates, whichever BLAS
// the build uses.
func TestMatMulForwardAllocs(t *testing.T) { checkForwardAllocs(t, matMulAllocCases) }

func BenchmarkMatMul64x784x256Float64(b *testing.B) { benchmarkMatMul(b, graph.Float64) }
func BenchmarkMatMul64x784x256Float32(b *testing.B) { benchmarkMatMul(b, graph.Float32) }

// TestMatMulConcurrent runs large products from several goroutines at once,
// as machines sharing a program do: each must get its own exact result.
func TestMatMulConcurrent(t *testing.T) {
	want, in := matMulOperands(t, graph.Float64)
	if err := (MatMulOp{}).Forward(want, in); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for range cap(errs) {
		go func() {
			out := graph.NewDense(graph.Float64, 64, 256)
			for range 5 {
				if err := (MatMulOp{}).Forward(out, in); err != nil {
					errs <- err
					return
				}
				for i, v := range out.Float64s() {
					if w := want.Float64s()[i]; v != w {
						errs <- fmt.Errorf("element %d: got %v, want %v", i, v, w)
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestMatMulSharedOperandOneProduct checks the batches of products that
// share one operand and run as one product: one matrix by a batch of
// columns (A·x_i, the column-vector form of a layer) and a batch of
// transposed rows by one matrix. Each batch of more than one must hold,
// bit for bit, the product
// of the stacked rows computed as one 2-D product by the shared matrix
// as stored (x_iᵀ·op(A)ᵀ, through the transpose flag), and agree with the
// sums done in float64 to rounding; odd sizes and transposes included.
func TestMatMulSharedOperandOneProduct(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 3))
	for _, dtype := range dtypes {
		for _, batch := range []int{1, 2, 5, 64} {
			for _, mk := range [][2]int{{1, 1}, {3, 17}, {64, 64}, {67, 5}, {7, 130}} {
				m, k := mk[0], mk[1]
				for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
					name := fmt.Sprintf("%v batch=%d m=%d k=%d trans=%v", dtype, batch, m, k, tr)
					a, x := randomValues(r, m, k), randomValues(r, batch, k) // A as m×k, rows x_i
					sa, sx := []int{m, k}, []int{batch, k, 1}
					av := a.vals
					if tr[0] {
						sa, av = []int{k, m}, transposeValues(a.vals, m, k)
					}
					if tr[1] {
						sx = []int{batch, 1, k}
					}
					in := []*tensor.Dense{dense(t, dtype, sa, av...), dense(t, dtype, sx, x.vals...)}
					got := graph.NewDense(dtype, batch, m, 1)
					if err := (MatMulOp{TransA: tr[0], TransB: tr[1]}).Forward(got, in); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					rows := []*tensor.Dense{dense(t, dtype, []int{batch, k}, x.vals...), in[0]}
					want := graph.NewDense(dtype, batch, m)
					if err := (MatMulOp{TransB: !tr[0]}).Forward(want, rows); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					assertSameProduct(t, name, got, want, graph.Float64s(rows[0]), graph.Float64s(in[0]), tr[0], batch, m, k)
				}
			}
		}
	}
	// A batch of transposed rows, (B, k, 1) by (k, n) with TransA: the
	// stacked rows times the matrix.
	for _, dtype := range dtypes {
		x, w := randomValues(r, 5, 9), randomValues(r, 9, 4)
		got, want := graph.NewDense(dtype, 5, 1, 4), graph.NewDense(dtype, 5, 4)
		wt := dense(t, dtype, w.shape, w.vals...)
		if err := (MatMulOp{TransA: true}).Forward(got, []*tensor.Dense{dense(t, dtype, []int{5, 9, 1}, x.vals...), wt}); err != nil {
			t.Fatal(err)
		}
		if err := (MatMulOp{}).Forward(want, []*tensor.Dense{dense(t, dtype, x.shape, x.vals...), wt}); err != nil {
			t.Fatal(err)
		}
		for i, v := range graph.Float64s(got) {
			if w := graph.Float64s(want)[i]; math.Float64bits(v) != math.Float64bits(w) {
				t.Fatalf("%v transposed rows: element %d is %v, want %v", dtype, i, v, w)
			}
		}
	}
}

// transposeValues is the m×k row-major matrix v transposed (k×m).
func transposeValues(v []float64, m, k int) []float64 {
	out := make([]float64, len(v))
	for i := range m {
		for j := range k {
			out[j*m+i] = v[i*k+j]
		}
	}
	return out
}

// assertSameProduct checks got, the batch of columns op(A)·x_i, against
// want, the stacked product, bit for bit (a batch of one is a single
// product as it is), and against float64 sums
// of x (batch×k) and A as stored (m×k, or k×m when transA).
func assertSameProduct(t *testing.T, name string, got, want *tensor.Dense, x, a []float64, transA bool, batch, m, k int) {
	t.Helper()
	g, w := graph.Float64s(got), graph.Float64s(want)
	tol := 1e-12
	if got.Dtype() == graph.Float32 {
		tol = 1e-4
	}
	for b := range batch {
		for i := range m {
			var sum, size float64
			for l := range k {
				ail := a[i*k+l]
				if transA {
					ail = a[l*m+i]
				}
				sum += ail * x[b*k+l]
				size += math.Abs(ail * x[b*k+l])
			}
			e := b*m + i
			if batch > 1 && math.Float64bits(g[e]) != math.Float64bits(w[e]) {
				t.Fatalf("%s: element %d is %v, the stacked product's %v", name, e, g[e], w[e])
			}
			if math.Abs(g[e]-sum) > tol*(1+size) {
				t.Fatalf("%s: element %d is %v, want %v", name, e, g[e], sum)
			}
		}
	}
}
