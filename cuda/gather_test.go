package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// gatherCases are tables and indices (repeated, in every index dtype)
// for Gather, and the other way round for ScatterAdd: rows is the
// table's first dimension, row the rest of its shape.
var gatherCases = []struct {
	rows    int
	row     []int
	indices []int64
	shape   []int // the indices'
}{
	{5, []int{3}, []int64{4, 0, 2, 4, 1, 4}, []int{6}},
	{4, []int{2, 3}, []int64{3, 3, 0, 1, 2, 3}, []int{2, 3}},
	{6, nil, []int64{5, 1, 1, 0}, []int{4}},
	{3, []int{4}, []int64{2}, nil},
	{1, []int{2}, []int64{0, 0, 0}, []int{3, 1}},
}

// indexDTypes are the dtypes indices are given in: the integer dtypes,
// and integer values held as floats of the data's dtype (nil here).
var indexDTypes = []*tensor.Dtype{&graph.Int64, &graph.Int32, nil}

// runGatherCases builds, for each data dtype, one graph holding every
// case in every index dtype: a table (or, with scatter, updates) x and
// indices, then build's nodes of them. It checks the nodes on the
// devices, with the op names, and then runs them twice more on each
// device, so that a kernel that does not overwrite its output shows.
func runGatherCases(t *testing.T, scatter bool, build func(x, indices *graph.Node, rows int) *graph.Node, names ...string) {
	for _, dtype := range floatDTypes {
		rng := rand.New(rand.NewPCG(8, 9))
		g := graph.New()
		feeds := vm.Feeds{}
		var outputs []*graph.Node
		for _, c := range gatherCases {
			for _, idt := range indexDTypes {
				indexDType := dtype
				if idt != nil {
					indexDType = *idt
				}
				shape := append([]int{c.rows}, c.row...)
				if scatter {
					shape = append(append([]int{}, c.shape...), c.row...)
				}
				x := opInput(t, g, feeds, rng, dtype, shape...)
				indices := g.Input(fmt.Sprintf("indices%d", len(feeds)), indexDType, c.shape...)
				var err error
				if feeds[indices], err = graph.FromInt64s(indexDType, c.indices, c.shape...); err != nil {
					t.Fatal(err)
				}
				y := build(x, indices, c.rows)
				outputs = append(append(outputs, y), opGrads(t, g, feeds, rng, y, x)...)
			}
		}
		checkOpKernels(t, outputs, feeds, names...)
		prog, err := compile.Compile(outputs)
		if err != nil {
			t.Fatal(err)
		}
		for _, dev := range testDevices(t) {
			compareRuns(t, dev, prog, []vm.Feeds{feeds, feeds})
		}
	}
}

func TestGatherKernel(t *testing.T) {
	runGatherCases(t, false, func(table, indices *graph.Node, _ int) *graph.Node { return ops.Gather(table, indices) },
		"Gather", "ScatterAdd")
}

func TestScatterAddKernel(t *testing.T) {
	runGatherCases(t, true, func(updates, indices *graph.Node, rows int) *graph.Node {
		return ops.ScatterAdd(updates, indices, rows)
	},
		"ScatterAdd", "Gather")
}

// An index out of range, or a float index that is not an integer, fails
// the run on the device as on the CPU, with an error naming the op; its
// kernels give NaN for the row it names (Gather) and add NaN to row 0
// (ScatterAdd), and nothing is read or written outside the tables.
func TestGatherBadIndex(t *testing.T) {
	for _, dev := range testDevices(t) {
		for _, c := range []struct {
			dtype tensor.Dtype
			bad   float64
		}{{graph.Int64, 3}, {graph.Int32, -1}, {graph.Float64, 1.5}, {graph.Float64, 7}} {
			g := graph.New()
			table := g.Input("table", graph.Float64, 3, 2)
			indices := g.Input("indices", c.dtype, 2)
			updates := g.Input("updates", graph.Float64, 2, 2)
			gathered := ops.Gather(table, indices)
			scattered := ops.ScatterAdd(updates, indices, 3)
			prog, err := compile.Compile([]*graph.Node{gathered, scattered})
			if err != nil {
				t.Fatal(err)
			}
			m, err := vm.New(prog, vm.OnDevice(dev))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			tab, _ := graph.FromFloat64s(graph.Float64, []float64{1, 2, 3, 4, 5, 6}, 3, 2)
			idx, _ := graph.FromFloat64s(c.dtype, []float64{c.bad, 2}, 2)
			up, _ := graph.FromFloat64s(graph.Float64, []float64{-1, -2, -3, -4}, 2, 2)
			valid, _ := graph.FromFloat64s(c.dtype, []float64{0, 2}, 2)
			checkFault(t, dev, m, vm.Feeds{table: tab, indices: valid, updates: up}, vm.Feeds{table: tab, indices: idx, updates: up}, gathered, "Gather", "ScatterAdd")
			for _, check := range []struct {
				n    *graph.Node
				want []float64
			}{
				{gathered, []float64{math.NaN(), math.NaN(), 5, 6}},
				{scattered, []float64{math.NaN(), math.NaN(), 0, 0, -3, -4}},
			} {
				got, err := m.Value(check.n)
				if err != nil {
					t.Fatal(err)
				}
				for i, w := range check.want {
					if v := graph.Float(got, i); !(v == w || math.IsNaN(v) && math.IsNaN(w)) {
						t.Errorf("%v: index %v: %s element %d is %v, want %v", dev, c.bad, check.n.Op().Name(), i, v, w)
					}
				}
			}
		}
	}
}
