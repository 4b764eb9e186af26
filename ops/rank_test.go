package ops_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// doubleOp is a user's op: twice its input, of any shape.
type doubleOp struct{}

func (doubleOp) Name() string                                           { return "Double" }
func (doubleOp) Type(in []graph.Type) (graph.Type, error)               { return in[0], nil }
func (doubleOp) Backward(*graph.GradContext, *graph.Node) []*graph.Node { return nil }
func (doubleOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	for i, v := range graph.Float64s(in[0]) {
		graph.SetFloat(out, i, 2*v)
	}
	return nil
}

// Every family of ops, and a user's op, takes values up to rank
// graph.MaxRank (8), computing what is worked out here by hand for x =
// (1, -2) in shape (2,1,…,1), and refuses rank 9, whether an input has it
// (an Input may) or the output would (a Gather of a rank-8 table by a
// matrix of indices), with one error naming the op, the inputs and the
// line that built it: no op gives a value that others refuse.
func TestRankLimitIsEveryOps(t *testing.T) {
	e := math.E
	cases := []struct {
		op    string
		build func(x *graph.Node) *graph.Node
		want  []float64 // at rank 8
	}{
		{"Exp", func(x *graph.Node) *graph.Node { return ops.Exp(x) }, []float64{e, 1 / (e * e)}},
		{"Scale", func(x *graph.Node) *graph.Node { return ops.Scale(x, 3) }, []float64{3, -6}},
		{"Add", func(x *graph.Node) *graph.Node { return ops.Add(x, x) }, []float64{2, -4}},
		{"Mul", func(x *graph.Node) *graph.Node { return ops.Mul(x, x.Graph().Scalar(-1, graph.Float64)) }, []float64{-1, 2}},
		{"Where", func(x *graph.Node) *graph.Node {
			mask, _ := graph.FromFloat64s(graph.Float64, []float64{1, 0}, x.Shape()...)
			return ops.Where(x.Graph().Const(mask), x, x.Graph().Scalar(7, graph.Float64))
		}, []float64{1, 7}},
		{"Sum", func(x *graph.Node) *graph.Node { return ops.Sum(x) }, []float64{-1}},
		{"Max", func(x *graph.Node) *graph.Node { return ops.Max(x, 0) }, []float64{1}},
		{"Softmax", func(x *graph.Node) *graph.Node { return ops.Softmax(x, 0) }, []float64{e / (e + 1/(e*e)), 1 / (e * e) / (e + 1/(e*e))}},
		{"Reshape", func(x *graph.Node) *graph.Node { return ops.Reshape(x, -1) }, []float64{1, -2}},
		{"Transpose", func(x *graph.Node) *graph.Node { return ops.Transpose(x) }, []float64{1, -2}},
		{"Concat", func(x *graph.Node) *graph.Node { return ops.Concat(0, x, x) }, []float64{1, -2, 1, -2}},
		{"Slice", func(x *graph.Node) *graph.Node { return ops.Slice(x, 0, 1, 2) }, []float64{-2}},
		{"Pad", func(x *graph.Node) *graph.Node { return ops.Pad(x, 0, 1, 0) }, []float64{0, 1, -2}},
		{"Cast", func(x *graph.Node) *graph.Node { return ops.Cast(x, graph.Int64) }, []float64{1, -2}},
		{"Identity", func(x *graph.Node) *graph.Node { return ops.Identity(x) }, []float64{1, -2}},
		{"Gather", func(x *graph.Node) *graph.Node {
			return ops.Gather(x, x.Graph().Const(tensor.New(tensor.WithShape(1), tensor.WithBacking([]int64{1}))))
		}, []float64{-2}},
		{"Double", func(x *graph.Node) *graph.Node { return graph.Apply(doubleOp{}, x) }, []float64{2, -4}},
	}
	for _, c := range cases {
		t.Run(c.op, func(t *testing.T) {
			for _, rank := range []int{8, 9} {
				shape := slices.Repeat([]int{1}, rank)
				shape[0] = 2
				g := graph.New()
				x := g.Input("x", graph.Float64, shape...)
				y := c.build(x)
				if rank == 8 {
					if y.Err() != nil {
						t.Fatalf("rank 8: %v", y.Err())
					}
					xv, _ := graph.FromFloat64s(graph.Float64, []float64{1, -2}, shape...)
					got, err := vm.Eval(vm.Feeds{x: xv}, y)
					if err != nil {
						t.Fatalf("rank 8: %v", err)
					}
					if vals := graph.Float64s(got[0]); len(vals) != len(c.want) || !near(vals, c.want) {
						t.Errorf("rank 8: got %v, want %v", vals, c.want)
					}
					continue
				}
				err := y.Err()
				want := "nabla: " + c.op + ": rank 9 is above the supported 8 (inputs float64(2,1,1,1,1,1,1,1,1)"
				if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "rank_test.go:") {
					t.Errorf("rank 9: got %v, want %q… at rank_test.go", err, want)
				}
			}
		})
	}

	// An output above the limit: a rank-8 table gathered by a matrix.
	g := graph.New()
	table := g.Input("table", graph.Float64, 2, 1, 1, 1, 1, 1, 1, 1)
	y := ops.Gather(table, g.Const(tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]int64{1, 0}))))
	want := "nabla: Gather: the output's rank 9 is above the supported 8 (inputs float64(2,1,1,1,1,1,1,1) and int64(1,2)) at rank_test.go:"
	if y.Err() == nil || !strings.HasPrefix(y.Err().Error(), want) {
		t.Errorf("Gather to rank 9: got %v, want %q", y.Err(), want)
	}
}

func near(a, b []float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12 {
			return false
		}
	}
	return true
}

// A loop stacks over its steps the carry each step began with (its
// gradient reads them) and the step outputs: a carry or step output of
// rank 8, whose stack would have rank 9, is the loop's error, naming the
// function called (it was the op's "the output's rank 9 is above the
// supported 8", naming Scan for a While). Rank 7 runs: (1, -2) + 1 three
// times is (4, 1).
func TestLoopsRefuseWhatTheyCannotStack(t *testing.T) {
	rank8 := func(g *graph.Graph) *graph.Node { return g.Input("x", graph.Float64, 2, 1, 1, 1, 1, 1, 1, 1) }
	const x8 = "float64(2,1,1,1,1,1,1,1), stacked float64(3,2,1,1,1,1,1,1,1) of rank 9, above the supported 8 at "
	addOne := func(c []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Add(c[0], c[0].Graph().Scalar(1, graph.Float64))}
	}
	for _, c := range []struct {
		name  string
		build func(g *graph.Graph) (*graph.Node, string)
		want  string
	}{
		{"Scan's carry", func(g *graph.Graph) (*graph.Node, string) {
			final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) { return c, nil },
				[]*graph.Node{g.Scalar(0, graph.Float64), rank8(g)}, nil, ops.Steps(3))
			return final[1], lineAt(-2)
		}, "nabla: Scan: the loop keeps the carry each step began with, stacked over the steps: init 1 is " + x8},
		{"Scan's step output", func(g *graph.Graph) (*graph.Node, string) {
			_, ys := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) { return c, []*graph.Node{rank8(g)} },
				[]*graph.Node{g.Scalar(0, graph.Float64)}, nil, ops.Steps(3))
			return ys[0], lineAt(-2)
		}, "nabla: Scan: the loop returns the step outputs, stacked over the steps: the body's step output 0 is " + x8},
		{"While's carry", func(g *graph.Graph) (*graph.Node, string) {
			final, _ := ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(ops.Sum(c[0]), ops.Sum(c[1])) },
				func(c []*graph.Node) []*graph.Node { return c }, []*graph.Node{g.Scalar(0, graph.Float64), rank8(g)}, ops.MaxSteps(3))
			return final[1], lineAt(-2)
		}, "nabla: While: the loop keeps the carry each step began with, stacked over the steps: init 1 is " + x8},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			out, line := c.build(g)
			if out.Err() == nil || out.Err().Error() != c.want+line {
				t.Fatalf("got  %v\nwant %s", out.Err(), c.want+line)
			}
		})
	}

	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 1, 1, 1, 1, 1, 1)
	final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) { return addOne(c), nil }, []*graph.Node{x}, nil, ops.Steps(3))
	xv, _ := graph.FromFloat64s(graph.Float64, []float64{1, -2}, x.Shape()...)
	got, err := vm.Eval(vm.Feeds{x: xv}, final[0])
	if err != nil || !near(graph.Float64s(got[0]), []float64{4, 1}) {
		t.Fatalf("a carry of rank 7: got %v (%v), want [4 1]", got, err)
	}
}
