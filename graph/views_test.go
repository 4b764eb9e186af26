package graph_test

import (
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// grid returns a 3×4 tensor of dtype holding 0, 1, …, 11 in row-major
// order, and views of it whose elements its backing does not hold in
// order: columns 1 and 2, and the transpose made in place by T.
func grid(t *testing.T, dtype tensor.Dtype) (cols, transposed *tensor.Dense) {
	t.Helper()
	vals := make([]float64, 12)
	for i := range vals {
		vals[i] = float64(i)
	}
	a, err := graph.FromFloat64s(dtype, vals, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	v, err := a.Slice(nil, tensor.S(1, 3))
	if err != nil {
		t.Fatal(err)
	}
	b, err := graph.FromFloat64s(dtype, vals, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.T(); err != nil {
		t.Fatal(err)
	}
	return v.(*tensor.Dense), b
}

// Hand-derived elements of grid's views, row-major.
var (
	wantCols       = []float64{1, 2, 5, 6, 9, 10}
	wantTransposed = []float64{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}
)

// Every accessor reads a view's elements, not its backing array.
func TestViewsAreReadInOrder(t *testing.T) {
	for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32, graph.Int64, graph.Int32} {
		cols, transposed := grid(t, dtype)
		for _, c := range []struct {
			name string
			view *tensor.Dense
			want []float64
		}{{"columns 1:3", cols, wantCols}, {"transpose", transposed, wantTransposed}} {
			name := dtype.String() + " " + c.name
			if got := graph.Float64s(c.view); !slices.Equal(got, c.want) {
				t.Errorf("case %s: Float64s = %v, want %v", name, got, c.want)
			}
			ints := graph.Int64s(c.view)
			for i, w := range c.want {
				if i >= len(ints) || ints[i] != int64(w) {
					t.Errorf("case %s: Int64s = %v, want %v", name, ints, c.want)
					break
				}
				if got := graph.Float(c.view, i); got != w {
					t.Errorf("case %s: Float(%d) = %v, want %v", name, i, got, w)
				}
			}
			clone, err := graph.CloneDense(c.view)
			if err != nil || !slices.Equal(graph.Float64s(clone), c.want) || clone.RequiresIterator() {
				t.Errorf("case %s: CloneDense = %v, %v, want a contiguous %v", name, clone, err, c.want)
			}
			dst := graph.NewDense(dtype, c.view.Shape()...)
			if n := graph.CopyValues(dst, c.view); n != len(c.want) || !slices.Equal(graph.Float64s(dst), c.want) {
				t.Errorf("case %s: CopyValues copied %d: %v, want %v", name, n, graph.Float64s(dst), c.want)
			}
			if b := graph.Backing(c.view); b != nil {
				t.Errorf("case %s: Backing = %v, want nil (its backing does not hold the elements in order)", name, b)
			}
			g := graph.New()
			k, p := g.Const(c.view), g.Param("p", c.view)
			if got := graph.Float64s(k.Value()); !slices.Equal(got, c.want) {
				t.Errorf("case %s: Const holds %v, want %v", name, got, c.want)
			}
			if graph.IsFloat(dtype) {
				if got := graph.Float64s(p.Value()); !slices.Equal(got, c.want) {
					t.Errorf("case %s: Param holds %v, want %v", name, got, c.want)
				}
			}
		}
	}
}

// Writes to a view land on its elements in the tensor it views.
func TestViewsAreWrittenInOrder(t *testing.T) {
	vals := make([]float64, 12)
	a, _ := graph.FromFloat64s(graph.Float64, vals, 3, 4)
	v, err := a.Slice(nil, tensor.S(1, 3))
	if err != nil {
		t.Fatal(err)
	}
	view := v.(*tensor.Dense)
	graph.SetFloat(view, 3, 7) // row 1, column 1 of the view: a[1][2]
	src, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 4, 5, 6}, 3, 2)
	b, _ := graph.FromFloat64s(graph.Float64, vals, 3, 4)
	w, _ := b.Slice(nil, tensor.S(1, 3))
	graph.CopyValues(w.(*tensor.Dense), src)
	for _, c := range []struct {
		name      string
		got, want []float64
	}{
		{"SetFloat", graph.Float64s(a), []float64{0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0}},
		{"CopyValues", graph.Float64s(b), []float64{0, 1, 2, 0, 0, 3, 4, 0, 0, 5, 6, 0}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("case %s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}
