package ops_test

import (
	"errors"
	"fmt"
	"math"
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

// conv1D, conv2D and pool build the op with options o on small images
// (a length of 8, 5×5) and a 3-wide kernel.
func conv1D(o ops.ConvOptions) func(l leaves) *graph.Node {
	return func(l leaves) *graph.Node {
		g := l.s.Graph()
		return ops.Conv1D(g.Input("x", graph.Float64, 1, 3, 8), g.Input("w", graph.Float64, 2, 3, 3), o)
	}
}

func conv2D(o ops.ConvOptions) func(l leaves) *graph.Node {
	return func(l leaves) *graph.Node {
		g := l.s.Graph()
		return ops.Conv2D(g.Input("x", graph.Float64, 1, 3, 5, 5), g.Input("w", graph.Float64, 2, 3, 3, 3), o)
	}
}

func pool(f func(*graph.Node, ops.PoolOptions) *graph.Node, o ops.PoolOptions) func(l leaves) *graph.Node {
	return func(l leaves) *graph.Node { return f(l.s.Graph().Input("x", graph.Float64, 1, 3, 5, 5), o) }
}

// leaves are the inputs every case of TestBadBuildsNeverPanic may use.
type leaves struct{ m23, m34, v4, v3, s, f32 *graph.Node }

// TestBadBuildsNeverPanic: each bad build records a sticky error naming the
// op and the types involved, and never panics.
func TestBadBuildsNeverPanic(t *testing.T) {
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
		// Conv1D takes one stride and one dilation, as PyTorch's conv1d
		// (a second one was taken for the length, the first dropped).
		{"conv1d two strides", conv1D(ops.ConvOptions{Stride: []int{1, 2}}), []string{"Conv1D", "stride [1 2]: want one value"}},
		{"conv1d two dilations", conv1D(ops.ConvOptions{Dilation: []int{2, 1}}), []string{"Conv1D", "dilation [2 1]: want one value"}},
		{"conv1d four paddings", conv1D(ops.ConvOptions{Padding: []int{1, 1, 1, 1}}), []string{"Conv1D", "padding [1 1 1 1]: want one value, or a before and an after"}},
		{"conv1d output padding", conv1D(ops.ConvOptions{Stride: []int{2}, OutputPadding: []int{1}}), []string{"Conv1D", "output padding [1]: only a transposed convolution has one"}},
		{"conv1d zero stride", conv1D(ops.ConvOptions{Stride: []int{0}}), []string{"Conv1D", "stride [0]: must be at least 1"}},
		{"conv1d negative padding", conv1D(ops.ConvOptions{Padding: []int{2, -1}}), []string{"Conv1D", "padding [2 -1]: must not be negative"}},
		{"conv1d padding overflow", conv1D(ops.ConvOptions{Padding: []int{math.MaxInt}}),
			[]string{"Conv1D", "sizes overflow an int: input 8, padding 9223372036854775807 and 9223372036854775807, kernel 3"}},
		{"conv2d output padding", conv2D(ops.ConvOptions{Stride: []int{2}, OutputPadding: []int{1}}), []string{"Conv2D", "output padding [1]: only a transposed convolution has one"}},
		// Sizes that overflow an int: a wrapped sum or product made a
		// plausible output (one element of zeros for padding MaxInt).
		{"conv2d padding overflow", conv2D(ops.ConvOptions{Padding: []int{math.MaxInt}}),
			[]string{"Conv2D", "height: sizes overflow an int: input 5, padding 9223372036854775807 and 9223372036854775807, kernel 3, stride 1, dilation 1"}},
		{"conv2d dilation overflow", conv2D(ops.ConvOptions{Dilation: []int{1, 1 << 62}}),
			[]string{"Conv2D", "width: sizes overflow an int: input 5, padding 0 and 0, kernel 3, stride 1, dilation 4611686018427387904"}},
		{"conv2d same padding overflow", conv2D(ops.ConvOptions{Same: true, Dilation: []int{math.MaxInt}}), []string{"Conv2D", "sizes overflow an int"}},
		{"conv2d groups overflow", conv2D(ops.ConvOptions{Groups: 1 << 62}), []string{"Conv2D", "do not fit 4611686018427387904 group(s)"}},
		{"conv transpose stride overflow", func(l leaves) *graph.Node {
			g := l.s.Graph()
			return ops.ConvTranspose2D(g.Input("x", graph.Float64, 1, 3, 5, 5), g.Input("w", graph.Float64, 3, 2, 3, 3), ops.ConvOptions{Stride: []int{math.MaxInt}})
		}, []string{"ConvTranspose2D", "height: sizes overflow an int: input 5, stride 9223372036854775807"}},
		{"conv transpose groups overflow", func(l leaves) *graph.Node {
			g := l.s.Graph()
			return ops.ConvTranspose2D(g.Input("x", graph.Float64, 1, 3, 5, 5), g.Input("w", graph.Float64, 3, 2, 3, 3), ops.ConvOptions{Groups: 1 << 62})
		}, []string{"ConvTranspose2D", "in 4611686018427387904 groups has more channels than an int can count"}},
		{"conv unfolding over the memory limit", func(l leaves) *graph.Node {
			g := l.s.Graph()
			return ops.Conv2D(g.Input("x", graph.Float64, 1, 1<<30, 64, 64), g.Input("w", graph.Float64, 1, 1<<30, 3, 3), ops.ConvOptions{})
		}, []string{"Conv2D", "unfolding the input: float64(9663676416,62,62) needs 297177377144832 bytes", "over the memory limit"}},
		{"conv1d unfolding over the memory limit", func(l leaves) *graph.Node {
			g := l.s.Graph()
			return ops.Conv1D(g.Input("x", graph.Float64, 1, 1<<30, 4096), g.Input("w", graph.Float64, 1, 1<<30, 3), ops.ConvOptions{})
		}, []string{"Conv1D", "unfolding the input: float64(3221225472,1,4094) needs", "over the memory limit"}},
		// PyTorch's rule: pool padding at most half the kernel (2·2⁶²
		// wrapped to a negative number and passed, giving -Inf).
		{"max pool padding overflow", pool(ops.MaxPool2D, ops.PoolOptions{Kernel: []int{2}, Padding: []int{1 << 62}}),
			[]string{"MaxPool2D", "padding [4611686018427387904 4611686018427387904]: must be at most half the kernel [2 2]"}},
		{"avg pool padding over half", pool(ops.AvgPool2D, ops.PoolOptions{Kernel: []int{3}, Padding: []int{2}}), []string{"AvgPool2D", "padding [2 2]: must be at most half the kernel [3 3]"}},
		{"pool zero stride", pool(ops.MaxPool2D, ops.PoolOptions{Kernel: []int{2}, Stride: []int{1, 0}}), []string{"MaxPool2D", "stride [1 0]: must be at least 1"}},
		{"pool zero dilation", pool(ops.MaxPool2D, ops.PoolOptions{Kernel: []int{2}, Dilation: []int{0}}), []string{"MaxPool2D", "dilation [0]: must be at least 1"}},
		{"pool dilation overflow", pool(ops.MaxPool2D, ops.PoolOptions{Kernel: []int{3}, Stride: []int{1}, Dilation: []int{1 << 62}}),
			[]string{"MaxPool2D", "height: sizes overflow an int: input 5, padding 0 and 0, kernel 3, stride 1, dilation 4611686018427387904"}},
		{"pad overflow", func(l leaves) *graph.Node { return ops.Pad(l.v3, 0, math.MaxInt, math.MaxInt) },
			[]string{"Pad", "padding (9223372036854775807, 9223372036854775807) of axis 0 of shape (3) overflows an int"}},
		{"concat overflow", func(l leaves) *graph.Node {
			x := l.s.Graph().Input("e", graph.Float64, 0, 1<<62)
			return ops.Concat(1, x, x, x, x)
		}, []string{"Concat", "the sizes along axis 1 overflow an int"}},
		{"reshape overflow", func(l leaves) *graph.Node { return ops.Reshape(l.m23, -1, 4, 1<<62+1) },
			[]string{"Reshape", "cannot reshape (2,3) to (-1,4,4611686018427387905): more elements than an int can count"}},
		{"reshape overflow to zero", func(l leaves) *graph.Node {
			return ops.Reshape(l.s.Graph().Input("e", graph.Float64, 0), -1, 1<<62, 4)
		}, []string{"Reshape", "more elements than an int can count"}},
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
