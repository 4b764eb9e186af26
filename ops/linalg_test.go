package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
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

// plus adds c to every element.
func (v values) plus(c float64) values {
	for i := range v.vals {
		v.vals[i] += c
	}
	return v
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

// TestMatMulLarge compares products big enough to be blocked and split
// across workers with a plain triple loop, for every transposition.
func TestMatMulLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, dims := range [][3]int{{70, 300, 270}, {20, 150, 600}, {5, 3, 4}} {
		m, k, n := dims[0], dims[1], dims[2]
		for _, flags := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, dtype := range dtypes {
				name := fmt.Sprintf("(%d,%d)·(%d,%d) trans %v %v", m, k, k, n, flags[0], flags[1])
				g := graph.New()
				aShape, bShape := []int{m, k}, []int{k, n}
				if flags[0] {
					aShape = []int{k, m}
				}
				if flags[1] {
					bShape = []int{n, k}
				}
				a, b := randomValues(r, aShape...), randomValues(r, bShape...)
				y := MatMulT(g.Const(dense(t, dtype, a.shape, a.vals...)), g.Const(dense(t, dtype, b.shape, b.vals...)),
					flags[0], flags[1])
				got := graph.Float64s(eval(t, y, nil))
				for i := range m {
					for j := range n {
						want := 0.0
						for l := range k {
							want += matrixAt(a, flags[0], i, l) * matrixAt(b, flags[1], l, j)
						}
						tol := 1e-12 * float64(k)
						if dtype == graph.Float32 {
							tol = 1e-6 * float64(k)
						}
						if g := got[i*n+j]; math.Abs(g-want) > tol {
							t.Fatalf("case %v %v [%d,%d]: got %v, want %v", name, dtype, i, j, g, want)
						}
					}
				}
			}
		}
	}
}

// randomValues is an input of the given shape with values in [-1, 1).
func randomValues(r *rand.Rand, shape ...int) values {
	v := values{shape: shape, vals: make([]float64, graph.ShapeSize(shape))}
	for i := range v.vals {
		v.vals[i] = 2*r.Float64() - 1
	}
	return v
}

// matrixAt is element (i,j) of the 2-D v, or of its transpose.
func matrixAt(v values, trans bool, i, j int) float64 {
	if trans {
		i, j = j, i
	}
	return v.vals[i*v.shape[1]+j]
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

func BenchmarkMatMul64x784x256Float64(b *testing.B) { benchmarkMatMul(b, graph.Float64) }
func BenchmarkMatMul64x784x256Float32(b *testing.B) { benchmarkMatMul(b, graph.Float32) }
