package compile

import (
	"slices"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func TestConstfold(t *testing.T) {
	tg := newTestGraph()
	x, c := tg.x, tg.c
	big := ops.BroadcastTo(c(1), 1025, 1024) // just over maxFolded elements
	cases := []struct {
		name string
		y    *graph.Node
		want []string
	}{
		{"scalar", ops.Add(x, ops.Exp(c(0))), []string{"%0 = Add x 1", "return %0"}},
		{"chain", ops.Mul(x, ops.Scale(ops.Add(c(1), c(2)), 2)), []string{"%0 = Mul x 6", "return %0"}},
		{"tensor", ops.Add(x, ops.Square(tg.fill(3, 3))), []string{"%0 = Add x const(3)", "return %0"}},
		{"all constant", ops.Neg(c(2)), []string{"return -2"}},
		{"inputs stay", ops.Exp(ops.Add(x, c(1))), []string{"%0 = Add x 1", "%1 = Exp %0", "return %1"}},
		{"multi-output", ops.Mul(graph.ApplyMulti(pairOp{1}, c(2))[1], x), []string{"%0 = Mul 1 x", "return %0"}},
		{"too big", ops.Sum(big), []string{"%0 = BroadcastTo 1", "%1 = Sum %0", "return %1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg.expect(t, []*graph.Node{tc.y}, only("constfold"), tc.want...)
		})
	}
}

// TestConstfoldValue: a folded tensor constant holds the kernel's result.
func TestConstfoldValue(t *testing.T) {
	tg := newTestGraph()
	k := tg.g.Const(must(graph.FromFloat64s(graph.Float64, []float64{1, 2, 3}, 3)))
	y := ops.Add(tg.x, ops.Square(k))
	p := tg.expect(t, []*graph.Node{y}, only("constfold"), "%0 = Add x const(3)", "return %0")
	folded := p.Slots()[p.Instructions()[0].In[1]]
	if got, want := graph.Float64s(folded.Const), []float64{1, 4, 9}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if folded.Node != y.Inputs()[1] {
		t.Errorf("the folded slot names node %v, want the Square it replaced", folded.Node)
	}
}

// TestConstfoldErrors: a kernel failing on constants is a compile error
// naming the node and where it was built.
func TestConstfoldErrors(t *testing.T) {
	for _, panics := range []bool{false, true} {
		tg := newTestGraph()
		bad := graph.Apply(failOp{panics}, tg.c(1)).SetName("culprit")
		_, err := Compile([]*graph.Node{ops.Add(tg.x, bad)})
		want := []string{"folding constant Fail", `"culprit"`, "constfold_test.go:"}
		if panics {
			want = append(want, "panicked: kernel bug")
		} else {
			want = append(want, "out of luck")
		}
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("case panics=%v: got %v, want an error containing %q", panics, err, w)
			}
		}
		if _, err := Compile([]*graph.Node{ops.Add(tg.x, bad)}, WithoutPass("constfold")); err != nil {
			t.Errorf("case panics=%v without constfold: got %v, want no compile error", panics, err)
		}
	}
}

// TestConstfoldSkipsOpsWithoutArguments: nothing says they are pure.
func TestConstfoldSkipsOpsWithoutArguments(t *testing.T) {
	tg := newTestGraph()
	y := ops.Add(tg.x, tg.g.Apply(sourceOp{}))
	tg.expect(t, []*graph.Node{y}, only("constfold"), "%0 = Source", "%1 = Add x %0", "return %1")
}
