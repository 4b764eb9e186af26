package data

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"gorgonia.org/tensor"
)

// numbered returns a data set of n rows: column "x" (float32, 1×2 per
// row) holds (i, 2i) and column "y" (int64) holds i, so every row shows
// where it came from.
func numbered(t *testing.T, n int) *Tensors {
	t.Helper()
	x, y := make([]float32, 0, 2*n), make([]int64, 0, n)
	for i := range n {
		x = append(x, float32(i), float32(2*i))
		y = append(y, int64(i))
	}
	d, err := NewTensors(
		Column{"x", tensor.New(tensor.WithShape(n, 1, 2), tensor.WithBacking(x))},
		Column{"y", tensor.New(tensor.WithShape(n), tensor.WithBacking(y))},
	)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// order checks that every row of d is intact (x = (y, 2y)) and returns
// the labels in order.
func order(t *testing.T, d *Tensors) []int64 {
	t.Helper()
	x, y := d.Column("x").Float32s(), d.Column("y").Int64s()
	if len(x) != 2*len(y) || d.Len() != len(y) {
		t.Fatalf("got %d x values, %d labels, Len %d", len(x), len(y), d.Len())
	}
	for i, v := range y {
		if x[2*i] != float32(v) || x[2*i+1] != float32(2*v) {
			t.Errorf("row %d: x %v with label %d", i, x[2*i:2*i+2], v)
		}
	}
	return slices.Clone(y)
}

func TestNewTensorsErrors(t *testing.T) {
	f := func(shape ...int) *tensor.Dense {
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(make([]float64, product(shape))))
	}
	for _, tc := range []struct {
		name string
		cols []Column
		want string
	}{
		{"none", nil, "no columns"},
		{"nil", []Column{{"x", nil}}, `column "x" has no tensor`},
		{"same name", []Column{{"x", f(2)}, {"x", f(2)}}, `two columns are named "x"`},
		{"rows", []Column{{"x", f(2, 3)}, {"y", f(3)}}, `column "y" has 3 rows and column "x" 2`},
		{"scalar", []Column{{"s", tensor.New(tensor.FromScalar(1.0))}}, "scalar"},
		{"dtype", []Column{{"b", tensor.New(tensor.WithShape(2), tensor.WithBacking([]bool{true, false}))}}, "dtype bool is not supported"},
	} {
		if _, err := NewTensors(tc.cols...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %v: got error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		fraction float64
		wantTest int
	}{
		{0.3, 3}, {0.25, 3}, {0.04, 0}, {0.96, 10}, {0, 0}, {1, 10},
	} {
		d := numbered(t, 10)
		train, test, err := d.Split(tc.fraction, 7)
		if err != nil {
			t.Errorf("case %v: %v", tc.fraction, err)
			continue
		}
		if test.Len() != tc.wantTest || train.Len() != 10-tc.wantTest {
			t.Errorf("case %v: got %d train and %d test rows, want %d and %d", tc.fraction, train.Len(), test.Len(), 10-tc.wantTest, tc.wantTest)
			continue
		}
		all := append(order(t, train), order(t, test)...)
		slices.Sort(all)
		if want := order(t, numbered(t, 10)); !slices.Equal(all, want) {
			t.Errorf("case %v: got rows %v, want each of %v once", tc.fraction, all, want)
		}
		if got := order(t, d); !slices.IsSorted(got) {
			t.Errorf("case %v: Split changed the data set: %v", tc.fraction, got)
		}
		if !slices.Equal(train.Names(), []string{"x", "y"}) || !slices.Equal(train.Column("x").Shape(), tensor.Shape{10 - tc.wantTest, 1, 2}) {
			t.Errorf("case %v: got columns %v, x shaped %v", tc.fraction, train.Names(), train.Column("x").Shape())
		}
	}
	d := numbered(t, 50)
	train1, test1, _ := d.Split(0.2, 1)
	train2, test2, _ := d.Split(0.2, 1)
	_, test3, _ := d.Split(0.2, 2)
	if !slices.Equal(order(t, train1), order(t, train2)) || !slices.Equal(order(t, test1), order(t, test2)) {
		t.Errorf("same seed: different splits")
	}
	if slices.Equal(order(t, test1), order(t, test3)) || slices.IsSorted(order(t, train1)) {
		t.Errorf("seeds 1 and 2 gave test rows %v and %v; want different, shuffled splits", order(t, test1), order(t, test3))
	}
}

// A test fraction outside [0, 1], NaN included, is an error, not a
// fraction quietly clamped.
func TestSplitErrors(t *testing.T) {
	d := numbered(t, 10)
	for _, f := range []float64{-1, -0.01, 1.01, 1.5, math.Inf(1), math.Inf(-1), math.NaN()} {
		train, test, err := d.Split(f, 7)
		if want := fmt.Sprintf("data: Split: test fraction %v is not in [0, 1]", f); err == nil || err.Error() != want || train != nil || test != nil {
			t.Errorf("case %v: got %v, %v and error %v, want %q", f, train, test, err, want)
		}
	}
	// The permutation of 10 rows takes 80 bytes.
	defer graph.SetMemoryLimit(graph.SetMemoryLimit(79))
	if _, _, err := d.Split(0.5, 7); err == nil || !strings.Contains(err.Error(), "data: Split: a permutation of 10 rows needs 80 bytes, over the memory limit of 79 bytes (graph.SetMemoryLimit)") {
		t.Errorf("79-byte limit: got error %v", err)
	}
	graph.SetMemoryLimit(80)
	if _, _, err := d.Split(0.5, 7); err != nil {
		t.Errorf("80-byte limit: %v", err)
	}
}

func TestShuffle(t *testing.T) {
	a, b, c := numbered(t, 20), numbered(t, 20), numbered(t, 20)
	a.Shuffle(3)
	b.Shuffle(3)
	c.Shuffle(4)
	oa, ob, oc := order(t, a), order(t, b), order(t, c)
	if !slices.Equal(oa, ob) {
		t.Errorf("same seed: got %v and %v, want the same order", oa, ob)
	}
	if slices.Equal(oa, oc) {
		t.Errorf("seeds 3 and 4: both gave %v, want different orders", oa)
	}
	if sorted := slices.Sorted(slices.Values(oa)); !slices.Equal(sorted, order(t, numbered(t, 20))) || slices.IsSorted(oa) {
		t.Errorf("got order %v, want a non-trivial permutation of 0..19", oa)
	}
	// The order is math/rand/v2's Perm with PCG(seed, seed): row i is old
	// row perm[i].
	if want := newRand(3).Perm(20); !slices.Equal(oa, toInt64(want)) {
		t.Errorf("got order %v, want Perm %v", oa, want)
	}
	// In place: no permutation of indices (8000 bytes), no copy of a column
	// (8000 bytes each).
	big := numbered(t, 1000)
	if got := allocatedBy(func() { big.Shuffle(5) }); got > 4096 {
		t.Errorf("Shuffle allocated %d bytes", got)
	}
	if want := newRand(5).Perm(1000); !slices.Equal(order(t, big), toInt64(want)) {
		t.Errorf("1000 rows: got an order other than Perm's")
	}
}

// allocatedBy is the bytes f allocates on the heap.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func toInt64(xs []int) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}

// Batches of 2 over 5 rows: two full ones and a last one of 1 row, into
// every dtype a batch takes.
func TestBatch(t *testing.T) {
	d := numbered(t, 5)
	if d.Batches(2) != 3 || d.Batches(5) != 1 || d.Batches(6) != 1 || d.Batches(0) != 0 {
		t.Errorf("Batches(2, 5, 6, 0): got %d %d %d %d, want 3 1 1 0", d.Batches(2), d.Batches(5), d.Batches(6), d.Batches(0))
	}
	if got := []int{d.BatchLen(0, 2), d.BatchLen(2, 2), d.BatchLen(3, 2), d.BatchLen(-1, 2), d.BatchLen(0, 6)}; !slices.Equal(got, []int{2, 1, 0, 0, 5}) {
		t.Errorf("BatchLen: got %v, want [2 1 0 0 5]", got)
	}
	// Sizes whose rows+size-1 overflows: one batch of every row.
	for _, size := range []int{math.MaxInt, math.MaxInt - 1, 1 << 62} {
		if got, n := d.Batches(size), d.BatchLen(0, size); got != 1 || n != 5 || d.BatchLen(1, size) != 0 || d.BatchLen(math.MaxInt, size) != 0 {
			t.Errorf("size %d: got %d batches, the first of %d rows, want 1 of 5", size, got, n)
		}
	}
	if got := d.Batches(math.MinInt); got != 0 {
		t.Errorf("Batches(MinInt) = %d, want 0", got)
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64} {
		for i, wantY := range [][]float64{{0, 1}, {2, 3}, {4}} {
			n := len(wantY)
			x := tensor.New(tensor.WithShape(n, 2), tensor.Of(tensor.Float64))
			y := batchTensor(dt, n, nil)
			if err := d.Batch(i, 2, x, y); err != nil {
				t.Fatalf("%v batch %d: %v", dt, i, err)
			}
			var gotY []float64
			switch dt {
			case tensor.Float32:
				for _, v := range y.Float32s() {
					gotY = append(gotY, float64(v))
				}
			case tensor.Float64:
				gotY = y.Float64s()
			case tensor.Int32:
				for _, v := range y.Int32s() {
					gotY = append(gotY, float64(v))
				}
			case tensor.Int64:
				for _, v := range y.Int64s() {
					gotY = append(gotY, float64(v))
				}
			}
			var wantX []float64
			for _, v := range wantY {
				wantX = append(wantX, v, 2*v)
			}
			if !slices.Equal(gotY, wantY) || !slices.Equal(x.Float64s(), wantX) {
				t.Errorf("%v batch %d: got x %v y %v, want %v and %v", dt, i, x.Float64s(), gotY, wantX, wantY)
			}
		}
	}
	x, y := tensor.New(tensor.WithShape(2, 2), tensor.Of(tensor.Float64)), tensor.New(tensor.WithShape(2), tensor.Of(tensor.Int64))
	if allocs := testing.AllocsPerRun(100, func() { _ = d.Batch(1, 2, x, y) }); allocs != 0 {
		t.Errorf("got %v allocations per batch, want 0", allocs)
	}
}

func TestBatchErrors(t *testing.T) {
	d := numbered(t, 5)
	f64 := func(shape ...int) *tensor.Dense {
		return tensor.New(tensor.WithShape(shape...), tensor.Of(tensor.Float64))
	}
	big, _ := NewTensors(Column{"y", tensor.New(tensor.WithShape(1), tensor.WithBacking([]int64{1 << 40}))})
	fx, _ := NewTensors(Column{"x", f64(1)})
	for _, tc := range []struct {
		name    string
		d       *Tensors
		i, size int
		dst     []*tensor.Dense
		want    string
	}{
		{"negative index", d, -1, 2, []*tensor.Dense{f64(2, 2), f64(2)}, "batch -1 of size 2: the data set has 3 batches"},
		{"past the end", d, 3, 2, []*tensor.Dense{f64(2, 2), f64(2)}, "batch 3 of size 2"},
		{"zero size", d, 0, 0, []*tensor.Dense{f64(2, 2), f64(2)}, "data: batch 0 of size 0: the batch size is not positive"},
		{"negative size", d, 0, math.MinInt, []*tensor.Dense{f64(2, 2), f64(2)}, "the batch size is not positive"},
		{"huge size, second batch", d, 1, math.MaxInt, []*tensor.Dense{f64(5, 2), f64(5)}, "the data set has 1 batches of 9223372036854775807 rows (5 in all)"},
		{"huge index", d, math.MaxInt, 2, []*tensor.Dense{f64(2, 2), f64(2)}, "the data set has 3 batches"},
		{"one tensor", d, 0, 2, []*tensor.Dense{f64(2, 2)}, "1 tensors for 2 columns"},
		{"full tensor for the last batch", d, 2, 2, []*tensor.Dense{f64(2, 2), f64(2)}, `column "x": want a tensor of 1 rows of 2 elements, got shape (2, 2)`},
		{"row size", d, 0, 2, []*tensor.Dense{f64(2, 3), f64(2)}, `column "x": want a tensor of 2 rows of 2 elements`},
		{"nil", d, 0, 2, []*tensor.Dense{f64(2, 2), nil}, `column "y": want a tensor of 2 rows of 1 elements, got shape ()`},
		{"bool", d, 0, 2, []*tensor.Dense{f64(2, 2), tensor.New(tensor.WithShape(2), tensor.Of(tensor.Bool))}, "cannot fill a bool tensor"},
		{"float into int", d, 0, 2, []*tensor.Dense{tensor.New(tensor.WithShape(2, 2), tensor.Of(tensor.Int64)), f64(2)}, "float32 values go into a float tensor"},
		{"view", d, 0, 2, []*tensor.Dense{view(t), f64(2)}, "the tensor is a view"},
		{"float64 into int", fx, 0, 1, []*tensor.Dense{tensor.New(tensor.WithShape(1), tensor.Of(tensor.Int32))}, "float64 values go into a float tensor"},
		{"int32 overflow", big, 0, 1, []*tensor.Dense{tensor.New(tensor.WithShape(1), tensor.Of(tensor.Int32))}, "value 1099511627776 does not fit an int32"},
	} {
		err := tc.d.Batch(tc.i, tc.size, tc.dst...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %v: got error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// view returns a 2×2 view of a 3×2 tensor.
func view(t *testing.T) *tensor.Dense {
	t.Helper()
	v, err := tensor.New(tensor.WithShape(3, 2), tensor.Of(tensor.Float64)).Slice(tensor.S(0, 2))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*tensor.Dense)
}

func TestLoader(t *testing.T) {
	d := numbered(t, 7)
	l, err := NewLoader(d, 3, tensor.Float64, tensor.Float64)
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != 3 || l.Size() != 3 {
		t.Fatalf("got %d batches of %d, want 3 of 3", l.Len(), l.Size())
	}
	var ys []float64
	for i := range l.Len() {
		b, err := l.Batch(i)
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{3, 1, 2}; i < 2 && !slices.Equal(b[0].Shape(), want) || i == 2 && !slices.Equal(b[0].Shape(), []int{1, 1, 2}) {
			t.Errorf("batch %d: x shaped %v", i, b[0].Shape())
		}
		ys = append(ys, b[1].Float64s()...)
	}
	if want := []float64{0, 1, 2, 3, 4, 5, 6}; !slices.Equal(ys, want) {
		t.Errorf("got labels %v, want %v", ys, want)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		for i := range l.Len() {
			_, _ = l.Batch(i)
		}
	}); allocs != 0 {
		t.Errorf("got %v allocations per epoch, want 0", allocs)
	}
	// The columns' own dtypes, and a size dividing the rows.
	l, err = NewLoader(d, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Batch(0)
	if err != nil || b[0].Dtype() != tensor.Float32 || b[1].Dtype() != tensor.Int64 || l.last != nil {
		t.Errorf("got %v, dtypes %v and %v, want float32 and int64 and no last batch", err, b[0].Dtype(), b[1].Dtype())
	}
	if _, err := l.Batch(1); err == nil {
		t.Error("batch 1 of 1: got no error")
	}
	for _, tc := range []struct {
		size   int
		dtypes []tensor.Dtype
		want   string
	}{
		{0, nil, "batch size 0 is not positive"},
		{2, []tensor.Dtype{tensor.Float64}, "1 dtypes for 2 columns"},
		{2, []tensor.Dtype{tensor.Float64, tensor.Uint8}, `column "y": cannot fill a uint8 tensor`},
	} {
		if _, err := NewLoader(d, tc.size, tc.dtypes...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %v: got error %v, want one containing %q", tc.want, err, tc.want)
		}
	}
}

// A batch size past the rows makes one batch of every row, in tensors of
// that many rows, however large the size: buffers hold the rows present.
func TestLoaderHugeSize(t *testing.T) {
	d := numbered(t, 10)
	for _, size := range []int{10, 11, 1 << 33, 1<<61 + 1, math.MaxInt} {
		l, err := NewLoader(d, size, tensor.Float64, tensor.Float64)
		if err != nil {
			t.Errorf("size %d: %v", size, err)
			continue
		}
		if l.Len() != 1 || l.Size() != size || l.last != nil {
			t.Errorf("size %d: got %d batches of %d, %d short tensors, want 1 of %d and none", size, l.Len(), l.Size(), len(l.last), size)
		}
		b, err := l.Batch(0)
		if err != nil {
			t.Errorf("size %d: %v", size, err)
			continue
		}
		if !slices.Equal(b[0].Shape(), []int{10, 1, 2}) || !slices.Equal(b[1].Float64s(), []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
			t.Errorf("size %d: got x shaped %v, labels %v", size, b[0].Shape(), b[1].Float64s())
		}
		if _, err := l.Batch(1); err == nil {
			t.Errorf("size %d: batch 1 of 1: got no error", size)
		}
	}
	for _, size := range []int{-1, math.MinInt} {
		want := fmt.Sprintf("data: NewLoader: batch size %d is not positive", size)
		if _, err := NewLoader(d, size); err == nil || err.Error() != want {
			t.Errorf("size %d: got error %v, want %q", size, err, want)
		}
	}
	if _, err := NewLoader(nil, 3); err == nil || err.Error() != "data: NewLoader: no data set (nil)" {
		t.Errorf("nil data set: got error %v", err)
	}
}

// A Loader's tensors count against graph.MemoryLimit: 7 rows in batches
// of 3 take 3+1 rows of x (2 float64) and y (1 float64), 96 bytes.
func TestLoaderMemoryLimit(t *testing.T) {
	d := numbered(t, 7)
	defer graph.SetMemoryLimit(graph.SetMemoryLimit(95))
	_, err := NewLoader(d, 3, tensor.Float64, tensor.Float64)
	if want := `data: NewLoader: a Loader of columns ["x" "y"] in batches of 3 rows needs 96 bytes, over the memory limit of 95 bytes (graph.SetMemoryLimit)`; err == nil || err.Error() != want {
		t.Errorf("95 bytes: got error %v, want %q", err, want)
	}
	graph.SetMemoryLimit(96)
	if _, err := NewLoader(d, 3, tensor.Float64, tensor.Float64); err != nil {
		t.Errorf("96 bytes: %v", err)
	}
	// float32 x and int64 y: 4·(2·4+8) = 64 bytes.
	graph.SetMemoryLimit(63)
	if _, err := NewLoader(d, 3); err == nil {
		t.Error("own dtypes, 63 bytes: got no error")
	}
	graph.SetMemoryLimit(64)
	if _, err := NewLoader(d, 3); err != nil {
		t.Errorf("own dtypes, 64 bytes: %v", err)
	}
}

func TestArgmax(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want int
	}{{[]float64{1}, 0}, {[]float64{0.1, 0.7, 0.2}, 1}, {[]float64{3, -1, 3}, 0}, {[]float64{-5, -2, -9}, 1}} {
		if got := Argmax(c.xs); got != c.want {
			t.Errorf("case %v: got %d, want %d", c.xs, got, c.want)
		}
	}
}

func TestReshape(t *testing.T) {
	d := numbered(t, 3)
	if err := d.Reshape("x", 2); err != nil {
		t.Fatal(err)
	}
	if got := d.Column("x").Shape(); !slices.Equal(got, []int{3, 2}) {
		t.Errorf("got shape %v, want (3, 2)", got)
	}
	train, _, err := d.Split(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := train.Column("x").Shape(); !slices.Equal(got, []int{3, 2}) {
		t.Errorf("split: got shape %v, want (3, 2)", got)
	}
	order(t, train)
	for _, tc := range []struct {
		name string
		row  []int
		want string
	}{
		{"x", []int{3}, `rows of column "x" hold 2 elements, shape [3] holds 3`},
		{"x", []int{-1, -2}, "shape [-1 -2] has a negative dimension"},
		// 3·6148914691236517206 wraps around to 2 in an int.
		{"x", []int{3, 6148914691236517206}, `rows of column "x" hold 2 elements, shape [3 6148914691236517206] holds more than an int64 counts`},
		{"z", []int{2}, `no column is named "z"`},
	} {
		if err := d.Reshape(tc.name, tc.row...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %v %v: got error %v, want one containing %q", tc.name, tc.row, err, tc.want)
		}
	}
}
