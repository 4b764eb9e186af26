package compile_test

import (
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/optable"
	"github.com/nabla-go/nabla/internal/testkit/site"
	"github.com/nabla-go/nabla/vm"
)

// sealedOp is an identity without a Backward or a forward rule.
type sealedOp struct{}

func (sealedOp) Name() string                             { return "Sealed" }
func (sealedOp) Type(in []graph.Type) (graph.Type, error) { return in[0], nil }
func (sealedOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	graph.CopyValues(out, in[0])
	return nil
}

// checkedOp returns 2·in[1]; its tangent ignores in[0]'s
// (graph.TangentFree), and its forward rule gives 2·t₁, or reports fail.
type checkedOp struct{ fail string }

func (checkedOp) Name() string                             { return "Checked" }
func (checkedOp) Type(in []graph.Type) (graph.Type, error) { return in[1], nil }
func (checkedOp) TangentFree(i int) bool                   { return i == 0 }
func (checkedOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	v := graph.Float64s(in[1])
	for i := range v {
		graph.SetFloat(out, i, 2*v[i])
	}
	return nil
}
func (o checkedOp) JVP(ctx *graph.JVPContext) *graph.Node {
	if o.fail != "" {
		ctx.Errorf("%s", o.fail)
		return nil
	}
	if t := ctx.Tangent(1); t != nil {
		return graph.Apply(scaleBy{2}, t)
	}
	return nil
}

// scaleBy is x·k, for checkedOp's rule.
type scaleBy struct{ k float64 }

func (scaleBy) Name() string                             { return "ScaleBy" }
func (scaleBy) Type(in []graph.Type) (graph.Type, error) { return in[0], nil }
func (s scaleBy) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	for i, v := range graph.Float64s(in[0]) {
		graph.SetFloat(out, i, s.k*v)
	}
	return nil
}

// Forward mode gives an input that an op declares tangent-free no
// tangent on its account: what computes it (here an op without any
// derivative) is not differentiated, and the tangent is 2·t. A forward
// rule's Errorf is the driver's error naming the op.
func TestJVPTangentFreeInputs(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 3)
	y := graph.Apply(checkedOp{}, graph.Apply(sealedOp{}, x), x)
	tv := optable.TensorOf([]int{3}, 0.5, -1, 2)
	tan, err := compile.JVP([]*graph.Node{y}, []*graph.Node{x}, []*graph.Node{g.Const(tv)})
	if err != nil {
		t.Fatal(err)
	}
	got := graph.Float64s(runVmapped(t, tan, vm.Feeds{x: optable.TensorOf([]int{3}, 1, 2, 3)})[0])
	for i, want := range []float64{1, -2, 4} {
		if got[i] != want {
			t.Fatalf("tangent %v, want [1 -2 4]", got)
		}
	}
	bad := graph.Apply(checkedOp{fail: "no tangent today"}, x, x)
	_, err = compile.JVP([]*graph.Node{bad}, []*graph.Node{x}, []*graph.Node{g.Const(tv)})
	if want := "nabla: JVP: JVP of Checked: no tangent today at " + site.At(-1); err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}
