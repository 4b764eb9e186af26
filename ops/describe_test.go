package ops_test

import (
	"reflect"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func TestDescribe(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3, 8, 8)
	w := g.Input("w", graph.Float64, 4, 3, 3, 3)
	cases := []struct {
		node *graph.Node
		want ops.Attributes
	}{
		{ops.Slice(x, -1, 1, 5), ops.Attributes{Axis: 3, Start: 1, End: 5}},
		{ops.Pad(x, 1, 2, 3), ops.Attributes{Axis: 1, Before: 2, After: 3}},
		{ops.Concat(-2, x, x), ops.Attributes{Axis: 2}},
		{ops.LogSoftmax(x, -1), ops.Attributes{Axis: 3}},
		{ops.Transpose(x, 0, 2, 3, 1), ops.Attributes{Perm: []int{0, 2, 3, 1}}},
		{ops.MeanKeepDims(x, 3, 1), ops.Attributes{Axes: []int{1, 3}, KeepDims: true}},
		{ops.PowConst(x, 2.5), ops.Attributes{C: 2.5}},
		{ops.Conv2D(x, w, ops.ConvOptions{Stride: []int{2}, Padding: []int{1, 2}}), ops.Attributes{Conv: ops.ConvOptions{
			Stride: []int{2, 2}, Padding: []int{1, 1, 2, 2}, Dilation: []int{1, 1}, Groups: 1, OutputPadding: []int{0, 0}}}},
		{ops.ConvTranspose2D(x, g.Input("wt", graph.Float64, 3, 2, 3, 3), ops.ConvOptions{Stride: []int{2}}), ops.Attributes{Transposed: true, Conv: ops.ConvOptions{
			Stride: []int{2, 2}, Padding: []int{0, 0, 0, 0}, Dilation: []int{1, 1}, Groups: 1, OutputPadding: []int{0, 0}}}},
		{ops.MaxPool2D(x, ops.PoolOptions{Kernel: []int{2}, Padding: []int{1}}), ops.Attributes{Pool: ops.PoolOptions{
			Kernel: []int{2, 2}, Stride: []int{2, 2}, Padding: []int{1, 1}, Dilation: []int{1, 1}}}},
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		got, ok := ops.Describe(c.node.Op())
		if !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("case %d (%s): got %+v, %v, want %+v", i, c.node.OpName(), got, ok, c.want)
		}
	}
	final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return []*graph.Node{ops.Add(c[0], x[0])}, []*graph.Node{c[0]}
	}, []*graph.Node{g.Input("c", graph.Float64, 3)}, []*graph.Node{g.Input("seq", graph.Float64, 5, 3)}, ops.Reverse())
	scan, _ := final[0].MultiOp()
	if got, ok := ops.Describe(scan); !ok || got.Carries != 1 || got.Sums != 0 || got.Sequences != 1 || got.Steps != 5 || !got.Reverse {
		t.Errorf("Scan: got %+v, %v", got, ok)
	}
	if _, ok := ops.Describe(nil); ok {
		t.Errorf("Describe(nil): ok")
	}
}
