package ops

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// TestInspect: the inspection helpers recognise the ops the builders
// apply, and only those; the op constructors give the builders' ops.
func TestInspect(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	y := g.Input("y", graph.Float64, 2, 3)
	is := map[string]func(graph.Op) bool{
		"Add": IsAdd, "Sub": IsSub, "Mul": IsMul, "Div": IsDiv, "Neg": IsNeg, "Reshape": IsReshape,
		"Scale":        func(op graph.Op) bool { _, ok := IsScale(op); return ok },
		"Transpose":    func(op graph.Op) bool { _, ok := IsTranspose(op); return ok },
		"IdentityLike": IsIdentityLike,
	}
	cases := []struct {
		node *graph.Node
		want []string // the helpers that recognise its op
	}{
		{Add(x, y), []string{"Add"}},
		{Sub(x, y), []string{"Sub"}},
		{Mul(x, y), []string{"Mul"}},
		{Div(x, y), []string{"Div"}},
		{Pow(x, y), nil},
		{Neg(x), []string{"Neg"}},
		{Exp(x), nil},
		{Scale(x, 2), []string{"Scale"}},
		{PowConst(x, 2), nil},
		{Reshape(x, 6), []string{"IdentityLike", "Reshape"}},
		{Transpose(x), []string{"Transpose"}},
		{Identity(x), []string{"IdentityLike"}},
		{StopGradient(x), []string{"IdentityLike"}},
		{SumTo(x, 3), []string{"IdentityLike"}},
		{BroadcastTo(x, 4, 2, 3), []string{"IdentityLike"}},
		{Sum(x), nil},
		{MatMul(x, Transpose(y)), nil},
	}
	for _, c := range cases {
		var got []string
		for name, f := range is {
			if f(c.node.Op()) {
				got = append(got, name)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("case %v: got %v, want %v", c.node, got, c.want)
		}
	}
	if c, ok := IsScale(Scale(x, 2.5).Op()); !ok || c != 2.5 {
		t.Errorf("IsScale: got %v, %v, want 2.5, true", c, ok)
	}
	if ScaleOp(2.5) != Scale(x, 2.5).Op() {
		t.Errorf("ScaleOp(2.5) is not the op of Scale(x, 2.5)")
	}
	tr := Transpose(g.Input("t", graph.Float64, 2, 3, 4), 2, 0, 1)
	if perm, ok := IsTranspose(tr.Op()); !ok || !slices.Equal(perm, []int{2, 0, 1}) {
		t.Errorf("IsTranspose: got %v, %v, want [2 0 1], true", perm, ok)
	}
	if TransposeOp([]int{2, 0, 1}) != tr.Op() {
		t.Errorf("TransposeOp(2, 0, 1) is not the op of Transpose(t, 2, 0, 1)")
	}
}

// TestInPlaceKernels: every op declaring graph.InPlacer computes the same
// when its output is the declared input's buffer, including when the other
// input broadcasts or is the same tensor.
func TestInPlaceKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	random := func(dt tensor.Dtype, shape ...int) *tensor.Dense {
		vals := make([]float64, graph.ShapeSize(shape))
		for i := range vals {
			vals[i] = rng.Float64()*2 + 0.5 // positive, for Log, Sqrt and Pow
		}
		return dense(t, dt, shape, vals...)
	}
	var unaryOps []graph.Op
	for k := range unaryKind(len(unaryDefs)) {
		unaryOps = append(unaryOps, unary{kind: k, c: 1.5})
	}
	var binaryOps []graph.Op
	for k := range binaryKind(len(binaryNames)) {
		binaryOps = append(binaryOps, binary{k})
	}
	for _, dt := range dtypes {
		x := random(dt, 2, 3)
		var cases [][]*tensor.Dense // for binary ops: the other input of each shape, or x again
		for _, s := range [][]int{{2, 3}, {3}, {2, 1}, nil} {
			cases = append(cases, []*tensor.Dense{x, random(dt, s...)})
		}
		cases = append(cases, []*tensor.Dense{x, x})
		check := func(op graph.Op, in []*tensor.Dense) {
			p, ok := op.(graph.InPlacer)
			if !ok || p.InPlace() != 0 {
				t.Fatalf("%s: InPlace is not 0", op.Name())
			}
			want := graph.NewDenseOf(graph.TypeOf(dt, 2, 3))
			if err := op.Forward(want, in); err != nil {
				t.Fatal(err)
			}
			over := must(graph.CloneDense(in[0]))
			aliased := slices.Clone(in)
			for i := range aliased {
				if in[i] == in[0] {
					aliased[i] = over
				}
			}
			if err := op.Forward(over, aliased); err != nil {
				t.Fatal(err)
			}
			assertValues(t, over, []int{2, 3}, graph.Float64s(want)...)
		}
		for _, op := range unaryOps {
			check(op, []*tensor.Dense{x})
		}
		for _, op := range binaryOps {
			for _, in := range cases {
				check(op, in)
			}
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
