package ops_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// TestMatMulErrorMessage is the error a user sees for misaligned matrices:
// the op, both shapes and the line of the user's code.
func TestMatMulErrorMessage(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 64, 784)
	w := g.Input("w", graph.Float64, 256, 784)
	y, line := ops.MatMul(x, w), thisLine() // the line the error must name
	want := "nabla: MatMul: shapes (64,784) and (256,784) do not align (784 != 256)"
	if y.Err() == nil || g.Err() == nil {
		t.Fatal("no error")
	}
	msg := g.Err().Error()
	if !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, "at "+line) {
		t.Errorf("got %q, want %q ... at %s", msg, want, line)
	}
	var gerr *graph.Error
	if !errors.As(g.Err(), &gerr) || gerr.Op != "MatMul" || gerr.Site != line {
		t.Errorf("got %#v, want a *graph.Error for MatMul at %s", gerr, line)
	}
}

// thisLine is the caller's file:line, as errors name it.
func thisLine() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}

// refuseOp is a custom op whose type inference always refuses.
type refuseOp struct{}

func (refuseOp) Name() string { return "Refuse" }
func (refuseOp) Type([]graph.Type) (graph.Type, error) {
	return graph.Type{}, errors.New("inputs refused by the op")
}
func (refuseOp) Forward(*tensor.Dense, []*tensor.Dense) error { return nil }

// TestBadBuildsNeverPanic: each bad build records a sticky error naming the
// op and the types involved, and never panics.
func TestBadBuildsNeverPanic(t *testing.T) {
	type leaves struct{ m23, m34, v4, v3, s, f32 *graph.Node }
	cases := []struct {
		name  string
		build func(l leaves) *graph.Node
		want  []string
	}{
		{"matmul of a vector", func(l leaves) *graph.Node { return ops.MatMul(l.v4, l.m34) }, []string{"MatMul", "(4)"}},
		{"matmul misaligned", func(l leaves) *graph.Node { return ops.MatMul(l.m34, l.m23) }, []string{"MatMul", "(3,4)", "(2,3)"}},
		{"batched matmul batch mismatch", func(l leaves) *graph.Node {
			a := ops.Reshape(l.m23, 2, 3, 1)
			b := ops.Reshape(l.m34, 3, 1, 4)
			return ops.MatMul(a, b)
		}, []string{"MatMul", "(2,3,1)", "(3,1,4)"}},
		{"incompatible broadcast", func(l leaves) *graph.Node { return ops.Add(l.m23, l.v4) }, []string{"Add", "(2,3)", "(4)"}},
		{"where broadcast", func(l leaves) *graph.Node { return ops.Where(l.v3, l.m23, l.v4) }, []string{"Where", "(4)"}},
		{"dtype mix", func(l leaves) *graph.Node { return ops.Mul(l.v3, l.f32) }, []string{"Mul", "float64(3)", "float32(3)"}},
		{"sum bad axis", func(l leaves) *graph.Node { return ops.Sum(l.m23, 2) }, []string{"Sum", "axis 2", "(2,3)"}},
		{"softmax bad axis", func(l leaves) *graph.Node { return ops.Softmax(l.m23, -3) }, []string{"Softmax", "-3"}},
		{"max duplicate axis", func(l leaves) *graph.Node { return ops.Max(l.m23, 1, -1) }, []string{"Max", "axis"}},
		{"bad permutation", func(l leaves) *graph.Node { return ops.Transpose(l.m23, 0, 0) }, []string{"Transpose", "(2,3)"}},
		{"permutation wrong length", func(l leaves) *graph.Node { return ops.Transpose(l.m23, 1, 0, 2) }, []string{"Transpose"}},
		{"reshape wrong size", func(l leaves) *graph.Node { return ops.Reshape(l.m23, 4, 2) }, []string{"Reshape", "(2,3)", "(4,2)"}},
		{"broadcast to smaller", func(l leaves) *graph.Node { return ops.BroadcastTo(l.m23, 3) }, []string{"BroadcastTo", "(2,3)"}},
		{"sum to unrelated shape", func(l leaves) *graph.Node { return ops.SumTo(l.m23, 2) }, []string{"SumTo", "(2,3)"}},
		{"slice out of range", func(l leaves) *graph.Node { return ops.Slice(l.m23, 1, 2, 5) }, []string{"Slice", "(2,3)"}},
		{"concat mismatch", func(l leaves) *graph.Node { return ops.Concat(0, l.m23, l.m34) }, []string{"Concat", "(2,3)", "(3,4)"}},
		{"cross-entropy labels", func(l leaves) *graph.Node { return ops.CrossEntropy(l.m23, l.v3) }, []string{"CrossEntropy", "(2,3)", "(3)"}},
		{"nil input", func(l leaves) *graph.Node { return ops.Add(l.m23, nil) }, []string{"Add", "input 1 is nil"}},
		{"nil to a unary op", func(l leaves) *graph.Node { return ops.Tanh(ops.Add(nil, l.v3)) }, []string{"Add", "input 0 is nil"}},
		{"custom op refuses", func(l leaves) *graph.Node { return graph.Apply(refuseOp{}, l.v3) }, []string{"Refuse", "inputs refused", "float64(3)"}},
		{"rank too high", func(l leaves) *graph.Node {
			r9 := l.s.Graph().Input("r9", graph.Float64, 1, 1, 1, 1, 1, 1, 1, 1, 2)
			return ops.Exp(ops.Add(r9, l.s))
		}, []string{"Add", "rank 9"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			l := leaves{
				m23: g.Input("m23", graph.Float64, 2, 3),
				m34: g.Input("m34", graph.Float64, 3, 4),
				v4:  g.Input("v4", graph.Float64, 4),
				v3:  g.Input("v3", graph.Float64, 3),
				s:   g.Input("s", graph.Float64),
				f32: g.Input("f32", graph.Float32, 3),
			}
			var n *graph.Node
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panicked: %v", r)
					}
				}()
				n = c.build(l)
			}()
			if n.Err() == nil || g.Err() == nil {
				t.Fatalf("got no error, want one naming %v", c.want)
			}
			// Building on the poisoned node keeps the first error.
			if later := ops.Exp(n); later.Err() != g.Err() {
				t.Errorf("later build: got %v, want the first error", later.Err())
			}
			msg := g.Err().Error()
			for _, w := range append(c.want, "builderrors_test.go:") {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
		})
	}
}
