package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
)

// Each output of SharedMatMul has the bits of the MatMul, or MatMulAdd,
// it stands for, and is within rounding of a float64 loop over the
// definition; so are the products Decompose builds. Odd shapes, both
// dtypes, every number of rows, addends of shape (n) and (1, n) on some
// outputs.
func TestSharedMatMulIsEachProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dtype := range dtypes {
		for rows := 2; rows <= MaxSharedRows; rows++ {
			for _, s := range [][2]int{{1, 1}, {3, 5}, {7, 13}, {64, 65}, {33, 4}} {
				for addends := range uint8(1 << rows) {
					k, n := s[0], s[1]
					name := fmt.Sprintf("%v rows=%d k=%d n=%d addends=%b", dtype, rows, k, n, addends)
					g := graph.New()
					random := func(shape ...int) *graph.Node {
						v := make([]float64, graph.ShapeSize(shape))
						for i := range v {
							v[i] = rng.Float64()*2 - 1
						}
						return g.Const(dense(t, dtype, shape, v...))
					}
					var in, want []*graph.Node
					b := random(k, n)
					var adds []*graph.Node
					for i := range rows {
						a := random(1, k)
						in = append(in, a)
						if addends&(1<<i) == 0 {
							want = append(want, MatMul(a, b))
							continue
						}
						c := random(n)
						if i%2 == 1 {
							c = random(1, n)
						}
						adds = append(adds, c)
						want = append(want, MatMulAdd(a, b, c, false, false))
					}
					in = append(append(in, b), adds...)
					op := SharedMatMulOp{Rows: rows, Addends: addends}
					got := graph.ApplyMulti(op, in...)
					parts, err := op.Decompose(in)
					if err != nil {
						t.Fatalf("%s: Decompose: %v", name, err)
					}
					for i := range rows {
						g1 := graph.Float64s(eval(t, got[i], nil))
						for what, ref := range map[string]*graph.Node{"alone": want[i], "decomposed": parts[i]} {
							w := graph.Float64s(eval(t, ref, nil))
							for j := range w {
								if g1[j] != w[j] {
									t.Fatalf("%s: output %d[%d] = %v, %v %s", name, i, j, g1[j], w[j], what)
								}
							}
						}
						checkRowProduct(t, name, g1, graph.Float64s(in[i].Value()), graph.Float64s(b.Value()), addendOf(in, op, i), n, dtype == graph.Float32)
					}
				}
			}
		}
	}
}

// addendOf is output i's addend's values, or nil.
func addendOf(in []*graph.Node, op SharedMatMulOp, i int) []float64 {
	if op.Addends&(1<<i) == 0 {
		return nil
	}
	next := op.Rows + 1
	for j := range i {
		if op.Addends&(1<<j) != 0 {
			next++
		}
	}
	return graph.Float64s(in[next].Value())
}

// checkRowProduct compares got with a·B (+ c) summed in float64.
func checkRowProduct(t *testing.T, name string, got, a, b, c []float64, n int, f32 bool) {
	t.Helper()
	eps := 0x1p-53
	if f32 {
		eps = 0x1p-24
	}
	for j := range n {
		want, mag := 0.0, 0.0
		if c != nil {
			want, mag = c[j], math.Abs(c[j])
		}
		for l, x := range a {
			want += x * b[l*n+j]
			mag += math.Abs(x * b[l*n+j])
		}
		if tol := 2 * float64(len(a)+2) * eps * mag; !(math.Abs(got[j]-want) <= tol) {
			t.Fatalf("%s: [%d] = %v, want %v (±%g)", name, j, got[j], want, tol)
		}
	}
}

// SharedMatMul's operands are checked when it is applied; the errors name
// the op and what is wrong.
func TestSharedMatMulRejectsBadOperands(t *testing.T) {
	for _, c := range []struct {
		name    string
		op      SharedMatMulOp
		shapes  [][]int
		message string
	}{
		{"one row", SharedMatMulOp{Rows: 1}, [][]int{{1, 3}, {3, 2}}, "want 2 to 4 rows"},
		{"five rows", SharedMatMulOp{Rows: 5}, [][]int{{1, 3}, {1, 3}, {1, 3}, {1, 3}, {1, 3}, {3, 2}}, "want 2 to 4 rows"},
		{"addend of no row", SharedMatMulOp{Rows: 2, Addends: 4}, [][]int{{1, 3}, {1, 3}, {3, 2}, {2}}, "addends among them"},
		{"two-row operand", SharedMatMulOp{Rows: 2}, [][]int{{2, 3}, {1, 3}, {3, 2}}, "row 0 of shape (2,3)"},
		{"misaligned row", SharedMatMulOp{Rows: 2}, [][]int{{1, 3}, {1, 4}, {3, 2}}, "row 1 of shape (1,4): want (1,3)"},
		{"3-D matrix", SharedMatMulOp{Rows: 2}, [][]int{{1, 3}, {1, 3}, {2, 3, 2}}, "want 2-D"},
		{"wrong addend", SharedMatMulOp{Rows: 2, Addends: 2}, [][]int{{1, 3}, {1, 3}, {3, 2}, {3}}, "addend 0"},
		{"missing addend", SharedMatMulOp{Rows: 2, Addends: 3}, [][]int{{1, 3}, {1, 3}, {3, 2}, {2}}, "SharedMatMul"},
	} {
		g := graph.New()
		var in []*graph.Node
		for i, s := range c.shapes {
			in = append(in, g.Input(fmt.Sprint("x", i), graph.Float64, s...))
		}
		graph.ApplyMulti(c.op, in...)
		err := g.Err()
		if err == nil || !strings.Contains(err.Error(), c.message) || !strings.Contains(err.Error(), "SharedMatMul") {
			t.Errorf("%s: got %v, want an error of SharedMatMul with %q", c.name, err, c.message)
		}
	}
}
