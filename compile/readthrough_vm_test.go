package compile_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// readThroughCase is a reduction of a layout of an input of shape in.
type readThroughCase struct {
	name  string
	in    []int
	build func(x *graph.Node) *graph.Node
	fused string // the reduction's op name once read through; "" if it is not
}

func readThroughCases() []readThroughCase {
	t2 := func(x *graph.Node) *graph.Node { return ops.Transpose(x, 1, 0) }
	every2 := func(x *graph.Node) *graph.Node { // every other element of the last axis
		s := x.Shape()
		return ops.Reshape(ops.Slice(ops.Reshape(x, s[0], s[1]/2, 2), 2, 1, 2), s[0], s[1]/2)
	}
	other := func(x *graph.Node, shape ...int) *graph.Node { // a parameter of its own
		r := rand.New(rand.NewPCG(30, 13))
		return x.Graph().Param(fmt.Sprint("y", shape), must(graph.FromFloat64s(x.Type().DType, readThroughValues(r, graph.ShapeSize(shape), false), shape...)))
	}
	return []readThroughCase{
		// Columns folded in blocks: 131 rows (two blocks and a part), rows
		// of 67 (not a multiple of four).
		{"Sum T", []int{67, 131}, func(x *graph.Node) *graph.Node { return ops.Sum(t2(x), 1) }, "Sum(Transpose)"},
		{"Mean T", []int{67, 131}, func(x *graph.Node) *graph.Node { return ops.Mean(t2(x), 1) }, "Mean(Transpose)"},
		{"Max T", []int{67, 131}, func(x *graph.Node) *graph.Node { return ops.Max(t2(x), 1) }, "Max(Transpose)"},
		{"SumTo T", []int{67, 131}, func(x *graph.Node) *graph.Node { return ops.SumTo(t2(x), 131, 1) }, "SumTo(Transpose)"},
		// Rows that would walk columns one at a time: left to Transpose.
		{"Sum T axis 0", []int{67, 131}, func(x *graph.Node) *graph.Node { return ops.Sum(t2(x), 0) }, ""},
		{"Max T axis 0", []int{9, 13}, func(x *graph.Node) *graph.Node { return ops.Max(t2(x), 0) }, ""},
		{"Sum T all", []int{9, 13}, func(x *graph.Node) *graph.Node { return ops.Sum(t2(x)) }, ""},
		{"Sum T 3-d", []int{5, 7, 70}, func(x *graph.Node) *graph.Node { return ops.Sum(ops.Transpose(x, 0, 2, 1), 2) }, "Sum(Transpose)"},
		{"Sum T 3-d outer axes", []int{5, 7, 70}, func(x *graph.Node) *graph.Node { return ops.Sum(ops.Transpose(x, 2, 0, 1), 0, 2) }, ""},
		{"Max T 3-d", []int{6, 3, 5}, func(x *graph.Node) *graph.Node { return ops.MaxKeepDims(ops.Transpose(x, 1, 2, 0), 2) }, "Max(Transpose)"},
		{"Sum rows of one", []int{7, 9}, func(x *graph.Node) *graph.Node {
			return ops.Sum(ops.Reshape(ops.Transpose(x, 1, 0), 9, 7, 1), 1)
		}, ""}, // its rows of one element walk down columns
		// Strided rows: every other element.
		{"Sum strided", []int{11, 26}, func(x *graph.Node) *graph.Node { return ops.Sum(every2(x), 1) }, "Sum(Reshape(Slice(Reshape)))"},
		{"Mean strided", []int{11, 26}, func(x *graph.Node) *graph.Node { return ops.Mean(every2(x), 1) }, "Mean(Reshape(Slice(Reshape)))"},
		{"Max strided", []int{11, 26}, func(x *graph.Node) *graph.Node { return ops.Max(every2(x), 1) }, "Max(Reshape(Slice(Reshape)))"},
		{"Sum strided axis 0", []int{11, 26}, func(x *graph.Node) *graph.Node { return ops.Sum(every2(x), 0) }, "Sum(Reshape(Slice(Reshape)))"},
		{"SumTo strided", []int{11, 26}, func(x *graph.Node) *graph.Node { return ops.SumTo(every2(x), 1, 13) }, "SumTo(Reshape(Slice(Reshape)))"},
		{"Sum slice middle", []int{4, 10, 3}, func(x *graph.Node) *graph.Node { return ops.Sum(ops.Slice(x, 1, 2, 9), 1) }, "Sum(Slice)"},
		{"Sum T of slice", []int{30, 70}, func(x *graph.Node) *graph.Node { return ops.Sum(t2(ops.Slice(x, 1, 3, 69)), 1) }, "Sum(Transpose(Slice))"},
		// A Reshape merging a transpose's axes is no view: the chain is
		// read through up to it, the reshape's copy read as it is.
		{"Sum reshape of T", []int{6, 4}, func(x *graph.Node) *graph.Node {
			return ops.Sum(ops.Reshape(t2(x), 2, 12), 1)
		}, ""},
		// Elementwise ops of strided views: 37×15 elements, blocks of 256
		// and a part; runs of a Slice of a middle axis.
		{"Neg strided", []int{37, 30}, func(x *graph.Node) *graph.Node { return ops.Neg(every2(x)) }, "Neg(Reshape(Slice(Reshape)))"},
		{"Square strided", []int{37, 30}, func(x *graph.Node) *graph.Node { return ops.Square(every2(x)) }, "Square(Reshape(Slice(Reshape)))"},
		{"Exp strided", []int{37, 30}, func(x *graph.Node) *graph.Node { return ops.Exp(every2(x)) }, "Exp(Reshape(Slice(Reshape)))"},
		{"Sign strided", []int{37, 30}, func(x *graph.Node) *graph.Node { return ops.Sign(every2(x)) }, "Sign(Reshape(Slice(Reshape)))"},
		{"Sub strided", []int{37, 30}, func(x *graph.Node) *graph.Node { return ops.Sub(every2(x), other(x, 37, 15)) }, "Sub(Reshape(Slice(Reshape)))"},
		{"Div strided second", []int{37, 30}, func(x *graph.Node) *graph.Node { return ops.Div(other(x, 37, 15), every2(x)) }, "Div(Reshape(Slice(Reshape)))"},
		{"Greater strided", []int{37, 30}, func(x *graph.Node) *graph.Node { return ops.Greater(every2(x), other(x, 37, 15)) }, "Greater(Reshape(Slice(Reshape)))"},
		{"Tanh slice middle", []int{5, 40, 3}, func(x *graph.Node) *graph.Node { return ops.Tanh(ops.Slice(x, 1, 2, 39)) }, "Tanh(Slice)"},
		// Not read through: a transposed operand (Transpose's copy is
		// faster), a broadcast other operand, a reader that fuses.
		{"Neg T", []int{9, 13}, func(x *graph.Node) *graph.Node { return ops.Neg(t2(x)) }, ""},
		{"Mul strided broadcast", []int{6, 10}, func(x *graph.Node) *graph.Node { return ops.Mul(every2(x), other(x, 1, 5)) }, ""},
		{"Exp strided fused", []int{6, 10}, func(x *graph.Node) *graph.Node { return ops.Mul(ops.Exp(every2(x)), other(x, 6, 5)) }, ""},
		// Read elsewhere too: the copy is made anyway.
		{"Sum T read twice", []int{6, 4}, func(x *graph.Node) *graph.Node {
			tx := t2(x)
			return ops.Add(ops.Sum(tx, 1), ops.Sum(ops.Square(tx), 1))
		}, ""},
	}
}

// readThroughValues are values whose sums depend on the order of the
// additions (magnitudes from 2⁻²⁰ to 2²⁰), with a few zeros of either
// sign, infinities and NaNs.
func readThroughValues(r *rand.Rand, n int, specials bool) []float64 {
	v := make([]float64, n)
	special := []float64{math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1), math.NaN()}
	for i := range v {
		v[i] = (4*r.Float64() - 2) * math.Ldexp(1, r.IntN(41)-20)
		if specials && r.IntN(150) == 0 {
			v[i] = special[r.IntN(len(special))]
		}
	}
	return v
}

// TestReadThroughValues checks that reductions of Transposes and Slices,
// and elementwise ops of Slices, read through (pass readthrough) give the
// unfused program's values bit for bit, in both dtypes, with and without special values, and that
// the pass reads through where the layout allows it and nowhere else.
func TestReadThroughValues(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 11))
	for _, dtype := range []tensor.Dtype{graph.Float32, graph.Float64} {
		for _, specials := range []bool{false, true} {
			for _, c := range readThroughCases() {
				name := fmt.Sprintf("%s %v specials=%v", c.name, dtype, specials)
				g := graph.New()
				x := g.Input("x", dtype, c.in...)
				out := c.build(x)
				feed := must(graph.FromFloat64s(dtype, readThroughValues(r, graph.ShapeSize(c.in), specials), c.in...))
				fused := must(compile.Compile([]*graph.Node{out}, compile.WithChecks()))
				plain := must(compile.Compile([]*graph.Node{out}, compile.WithoutPass("readthrough")))
				if got := readThroughOps(fused); (c.fused == "") != (len(got) == 0) || c.fused != "" && got[0] != c.fused {
					t.Fatalf("%s: read-through ops %v, want %q", name, got, c.fused)
				}
				if got := readThroughOps(plain); len(got) != 0 {
					t.Fatalf("%s: without the pass, read-through ops %v", name, got)
				}
				want, got := runProgram(t, plain, x, feed, out), runProgram(t, fused, x, feed, out)
				for i := range want {
					if !sameFloat(got[i], want[i]) {
						t.Fatalf("%s: element %d is %v, the unfused program's %v", name, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestReadThroughHand checks read-through reductions on values summed by
// hand.
func TestReadThroughHand(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 6)
	tx := ops.Transpose(ops.Reshape(x, 2, 3, 2), 2, 1, 0) // (2, 3, 2): [k][j][i] = x[i][2j+k]
	sum := ops.Sum(tx, 2)                                 // x[0][2j+k] + x[1][2j+k]
	mx := ops.Max(ops.Slice(ops.Reshape(x, 2, 3, 2), 2, 1, 2), 1)
	p := must(compile.Compile([]*graph.Node{sum, mx}))
	if ops := readThroughOps(p); len(ops) != 2 {
		t.Fatalf("read-through ops %v, want two", ops)
	}
	feed := must(graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60}, 2, 6))
	m := must(vm.New(p))
	if err := m.Run(vm.Feeds{x: feed}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n    *graph.Node
		want []float64
	}{
		{sum, []float64{11, 33, 55, 22, 44, 66}}, // k = 0: columns 0, 2, 4; k = 1: 1, 3, 5
		{mx, []float64{6, 60}},                   // the largest odd-column element of each row
	} {
		if got := graph.Float64s(must(m.Value(c.n))); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%v: got %v, want %v", c.n, got, c.want)
		}
	}
}

// TestReadThroughGradients checks that gradients through Transposes and
// Slices summed away are the unfused program's, bit for bit.
func TestReadThroughGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 12))
	for _, dtype := range []tensor.Dtype{graph.Float32, graph.Float64} {
		g := graph.New()
		x := g.Param("x", must(graph.FromFloat64s(dtype, readThroughValues(r, 9*14, false), 9, 14)))
		a := ops.Sum(ops.Square(ops.Sum(ops.Transpose(x, 1, 0), 1)))
		b := ops.Sum(ops.Exp(ops.Max(ops.Slice(ops.Reshape(x, 9, 7, 2), 2, 0, 1), 1)))
		loss := ops.Add(a, b)
		grads := must(compile.Grad(loss, x))
		outs := append([]*graph.Node{loss}, grads...)
		fused := must(compile.Compile(outs))
		plain := must(compile.Compile(outs, compile.WithoutPass("readthrough")))
		if len(readThroughOps(fused)) == 0 {
			t.Fatalf("%v: nothing read through", dtype)
		}
		for _, n := range outs {
			want, got := runProgram(t, plain, nil, nil, n), runProgram(t, fused, nil, nil, n)
			for i := range want {
				if !sameFloat(got[i], want[i]) {
					t.Fatalf("%v %v: element %d is %v, the unfused program's %v", dtype, n, i, got[i], want[i])
				}
			}
		}
	}
}

// readThroughOps lists the program's instructions that read through a
// layout: named "Reduction(Layout…)".
func readThroughOps(p *compile.Program) []string {
	var names []string
	for _, in := range p.Instructions() {
		if n := in.Name(); strings.HasSuffix(n, ")") && !strings.HasPrefix(n, "Fused(") {
			names = append(names, n)
		}
	}
	return names
}

// runProgram runs p, feeding x (if not nil), and returns n's value.
func runProgram(t *testing.T, p *compile.Program, x *graph.Node, feed *tensor.Dense, n *graph.Node) []float64 {
	t.Helper()
	m := must(vm.New(p))
	defer m.Close()
	feeds := vm.Feeds{}
	if x != nil {
		feeds[x] = feed
	}
	if err := m.Run(feeds); err != nil {
		t.Fatal(err)
	}
	return graph.Float64s(must(m.Value(n)))
}
