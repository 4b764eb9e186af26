package data

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// numbered returns a data set of n rows where row i is (i, 2i) with class i,
// so every row shows where it came from.
func numbered(n int) Dataset {
	d := Dataset{Features: 2, Classes: n}
	for i := range n {
		d.X = append(d.X, float64(i), float64(2*i))
		d.Y = append(d.Y, i)
	}
	return d
}

// checkRows fails unless every row of d is intact (X = (y, 2y)) and returns
// the rows' classes in order.
func checkRows(t *testing.T, name string, d Dataset) []int {
	t.Helper()
	if len(d.X) != d.Len()*d.Features {
		t.Fatalf("case %v: got %d features for %d rows, want %d", name, len(d.X), d.Len(), d.Len()*d.Features)
	}
	for i, y := range d.Y {
		if got, want := d.X[2*i:2*i+2], []float64{float64(y), float64(2 * y)}; !slices.Equal(got, want) {
			t.Errorf("case %v: row %d: got %v, want %v", name, i, got, want)
		}
	}
	return d.Y
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		fraction float64
		wantTest int
	}{
		{0.3, 3},          // 0.3*10
		{0.25, 3},         // 2.5 rounds up
		{0.04, 0},         // 0.4 rounds down
		{0.96, 10},        // 9.6 rounds up
		{0, 0},            //
		{1, 10},           //
		{-1, 0},           // clamped to 0
		{1.5, 10},         // clamped to 1
		{math.Inf(1), 10}, // clamped to 1
		{math.NaN(), 0},   // taken as 0
	} {
		d := numbered(10)
		train, test := d.Split(tc.fraction, 7)
		if test.Len() != tc.wantTest || train.Len() != 10-tc.wantTest {
			t.Errorf("case %v: got %d train and %d test rows, want %d and %d", tc.fraction, train.Len(), test.Len(), 10-tc.wantTest, tc.wantTest)
			continue
		}
		all := append(checkRows(t, "train", train), checkRows(t, "test", test)...)
		slices.Sort(all)
		if want := numbered(10).Y; !slices.Equal(all, want) {
			t.Errorf("case %v: got rows %v, want each of %v once", tc.fraction, all, want)
		}
		if !slices.Equal(d.Y, numbered(10).Y) || !slices.Equal(d.X, numbered(10).X) {
			t.Errorf("case %v: Split changed the data set", tc.fraction)
		}
		if train.Features != 2 || test.Features != 2 || train.Classes != 10 || test.Classes != 10 {
			t.Errorf("case %v: got features %d, %d and classes %d, %d, want 2 and 10", tc.fraction, train.Features, test.Features, train.Classes, test.Classes)
		}
	}
}

func TestSplitSeeded(t *testing.T) {
	d := numbered(50)
	train1, test1 := d.Split(0.2, 1)
	train2, test2 := d.Split(0.2, 1)
	if !slices.Equal(train1.Y, train2.Y) || !slices.Equal(test1.Y, test2.Y) {
		t.Errorf("same seed: got %v and %v, want the same split", test1.Y, test2.Y)
	}
	_, test3 := d.Split(0.2, 2)
	if slices.Equal(test1.Y, test3.Y) {
		t.Errorf("seeds 1 and 2: both gave test rows %v, want different splits", test1.Y)
	}
	if slices.IsSorted(train1.Y) {
		t.Errorf("got train rows %v in their original order, want them shuffled", train1.Y)
	}
}

func TestShuffle(t *testing.T) {
	a, b, c := numbered(20), numbered(20), numbered(20)
	a.Shuffle(3)
	b.Shuffle(3)
	c.Shuffle(4)
	order := checkRows(t, "seed 3", a)
	checkRows(t, "seed 4", c)
	if !slices.Equal(order, b.Y) {
		t.Errorf("same seed: got %v and %v, want the same order", order, b.Y)
	}
	if slices.Equal(order, c.Y) {
		t.Errorf("seeds 3 and 4: both gave %v, want different orders", order)
	}
	if sorted := slices.Sorted(slices.Values(order)); !slices.Equal(sorted, numbered(20).Y) || slices.IsSorted(order) {
		t.Errorf("got order %v, want a non-trivial permutation of 0..19", order)
	}
}

func TestBatch(t *testing.T) {
	d := numbered(5)
	if got := d.Batches(2); got != 3 {
		t.Errorf("Batches(2): got %d, want 3", got)
	}
	x, y := make([]float64, 4), make([]float64, 2)
	for _, tc := range []struct {
		i     int
		wantY []float64
	}{
		{0, []float64{0, 1}},
		{1, []float64{2, 3}},
		{2, []float64{4, 0}}, // the last batch wraps around
		{3, []float64{1, 2}}, // and so does the next epoch's first
		{7, []float64{4, 0}}, // rows 14, 15 mod 5
	} {
		if err := d.Batch(tc.i, 2, x, y); err != nil {
			t.Fatalf("case %v: %v", tc.i, err)
		}
		wantX := []float64{tc.wantY[0], 2 * tc.wantY[0], tc.wantY[1], 2 * tc.wantY[1]}
		if !slices.Equal(y, tc.wantY) || !slices.Equal(x, wantX) {
			t.Errorf("case %v: got x %v y %v, want x %v y %v", tc.i, x, y, wantX, tc.wantY)
		}
	}
	// A batch larger than the data set repeats rows.
	x7, y7 := make([]float64, 14), make([]float64, 7)
	if err := d.Batch(1, 7, x7, y7); err != nil {
		t.Fatal(err)
	}
	if want := []float64{2, 3, 4, 0, 1, 2, 3}; !slices.Equal(y7, want) { // rows 7..13 mod 5
		t.Errorf("size 7: got y %v, want %v", y7, want)
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = d.Batch(1, 2, x, y) }); allocs != 0 {
		t.Errorf("got %v allocations per batch, want 0", allocs)
	}
}

func TestBatchErrors(t *testing.T) {
	d := numbered(5)
	for _, tc := range []struct {
		name    string
		d       Dataset
		i, size int
		nx, ny  int
		want    string
	}{
		{"negative index", d, -1, 2, 4, 2, "want a batch index ≥ 0 and a size > 0"},
		{"zero size", d, 0, 0, 0, 0, "want a batch index ≥ 0 and a size > 0"},
		{"empty data set", Dataset{Features: 2}, 0, 2, 4, 2, "the data set is empty"},
		{"inconsistent data set", Dataset{X: make([]float64, 3), Y: []int{0, 1}, Features: 2}, 0, 1, 2, 1, "holds 3 values for 2 rows of 2 features"},
		{"short x", d, 0, 2, 3, 2, "needs x of length 4 and y of length 2, got 3 and 2"},
		{"long y", d, 0, 2, 4, 3, "needs x of length 4 and y of length 2, got 4 and 3"},
	} {
		x, y := make([]float64, tc.nx), make([]float64, tc.ny)
		for k := range x {
			x[k] = -1
		}
		err := tc.d.Batch(tc.i, tc.size, x, y)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %v: got error %v, want one containing %q", tc.name, err, tc.want)
		}
		if slices.ContainsFunc(x, func(v float64) bool { return v != -1 }) {
			t.Errorf("case %v: got x %v, want it untouched", tc.name, x)
		}
	}
	if got := d.Batches(0); got != 0 {
		t.Errorf("Batches(0): got %d, want 0", got)
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
