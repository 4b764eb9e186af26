package data

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"testing"

	"gorgonia.org/tensor"
)

// The parsers return a tensor or an error for any input, never panic, and
// a tensor holds the elements its shape counts.
func FuzzNPY(f *testing.F) {
	f.Add(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", make([]byte, 8)))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseNPY(bytes.NewReader(b))
		if err == nil && d.Size() != product(d.Shape()) {
			t.Errorf("got %d elements for shape %v", d.Size(), d.Shape())
		}
	})
}

func FuzzIDX(f *testing.F) {
	f.Add(tinyImages)
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseIDX(maybeGzip(bytes.NewReader(b)))
		if err == nil && d.Size() != product(d.Shape()) {
			t.Errorf("got %d elements for shape %v", d.Size(), d.Shape())
		}
	})
}

// A data set of any rows and columns, cut by any batch size (huge ones
// included), split by any fraction and shuffled by any seed: errors
// exactly where the arguments are wrong, never a panic, and a Loader's
// tensors hold at most the rows present, so no size allocates more than
// the data set's size.
func FuzzLoader(f *testing.F) {
	for _, size := range []int{3, 10, 11, 1 << 33, 1<<61 + 1, math.MaxInt, 0, -1, math.MinInt} {
		f.Add(uint16(10), uint8(0x21), size, 0, 0.2, uint64(1))
	}
	f.Add(uint16(0), uint8(0x13), 4, -1, math.NaN(), uint64(2))
	f.Add(uint16(1000), uint8(0x00), 7, math.MaxInt, 1.5, uint64(3))
	f.Fuzz(func(t *testing.T, rows uint16, widths uint8, size, i int, fraction float64, seed uint64) {
		d := fuzzTensors(t, int(rows%2000), widths)
		n := d.Len()

		// Batches and BatchLen against math/big.
		bigSize, bigRows := big.NewInt(int64(size)), big.NewInt(int64(n))
		wantBatches := 0
		if size > 0 {
			q := new(big.Int).Add(bigRows, bigSize)
			wantBatches = int(q.Sub(q, big.NewInt(1)).Div(q, bigSize).Int64())
		}
		if got := d.Batches(size); got != wantBatches {
			t.Fatalf("%d rows: Batches(%d) = %d, want %d", n, size, got, wantBatches)
		}
		wantLen := 0
		if i >= 0 && i < wantBatches {
			left := new(big.Int).Sub(bigRows, new(big.Int).Mul(big.NewInt(int64(i)), bigSize))
			wantLen = int(min(left.Int64(), int64(size)))
		}
		if got := d.BatchLen(i, size); got != wantLen {
			t.Fatalf("%d rows: BatchLen(%d, %d) = %d, want %d", n, i, size, got, wantLen)
		}

		var l *Loader
		allocated := allocatedBy(func() {
			var err error
			l, err = NewLoader(d, size)
			if wantErr := size <= 0 || n == 0; (err != nil) != wantErr {
				t.Fatalf("%d rows: NewLoader(%d): error %v, want one: %v", n, size, err, wantErr)
			}
		})
		if l != nil {
			held := l.full[0].Shape()[0] // rows of each column's tensors
			if l.last != nil {
				held += l.last[0].Shape()[0]
			}
			if held > n || allocated > 1<<16+uint64(16*dataElements(d)) {
				t.Fatalf("%d rows: NewLoader(%d) made tensors of %d rows, allocated %d bytes", n, size, held, allocated)
			}
			checkEpoch(t, d, l)
			if _, err := l.Batch(i); (err != nil) != (wantLen == 0) {
				t.Fatalf("%d rows: batch %d of %d: error %v", n, i, size, err)
			}
		}

		train, test, err := d.Split(fraction, seed)
		if (err != nil) != !(fraction >= 0 && fraction <= 1) {
			t.Fatalf("Split(%v): error %v", fraction, err)
		}
		if err == nil && train.Len()+test.Len() != n {
			t.Fatalf("Split(%v) of %d rows: %d and %d", fraction, n, train.Len(), test.Len())
		}
		d.Shuffle(seed)
		if l != nil {
			checkEpoch(t, d, l)
		}
	})
}

// fuzzTensors makes a data set of rows rows and one to three columns, of
// 0 to 3 elements a row as widths's bit pairs say (int64, float32,
// float64); element e of row r is 4r+e, so a row shows where it came
// from, and the last column holds 4r alone: the row's label.
func fuzzTensors(t *testing.T, rows int, widths uint8) *Tensors {
	t.Helper()
	var cols []Column
	ncols := 1 + int(widths>>6)%3
	for k := range ncols {
		w := int(widths>>(2*k)) & 3
		if k == ncols-1 {
			w = 1
		}
		vals := make([]float64, rows*w)
		for r := range rows {
			for e := range w {
				vals[r*w+e] = float64(4*r + e)
			}
		}
		var backing any
		switch k {
		case 0:
			backing = convertAll[int64](vals)
		case 1:
			backing = convertAll[float32](vals)
		default:
			backing = vals
		}
		name := fmt.Sprint("c", k)
		cols = append(cols, Column{name, tensor.New(tensor.WithShape(rows, w), tensor.WithBacking(backing))})
	}
	d, err := NewTensors(cols...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func convertAll[T int64 | float32](xs []float64) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = T(x)
	}
	return out
}

// dataElements is the number of elements d holds.
func dataElements(d *Tensors) int {
	n := 0
	for _, c := range d.cols {
		n += d.rows * c.width
	}
	return n
}

// checkEpoch runs l over an epoch and checks that it gives every row of
// d once, in order, each intact (element e is the label, 4·row, plus e).
func checkEpoch(t *testing.T, d *Tensors, l *Loader) {
	t.Helper()
	labels := d.cols[len(d.cols)-1].backing
	next := 0
	for i := range l.Len() {
		b, err := l.Batch(i)
		if err != nil {
			t.Fatalf("batch %d of %d: %v", i, l.Size(), err)
		}
		rows := b[0].Shape()[0]
		for r := range rows {
			label := valueAt(labels, next+r)
			for k, c := range b {
				w := d.cols[k].width
				if w == 0 {
					continue // no elements (and Data panics on an empty tensor)
				}
				got := c.Data()
				for e := range w {
					if v := valueAt(got, r*w+e); v != label+float64(e) {
						t.Fatalf("batch %d, row %d, column %d, element %d: got %v, want %v", i, r, k, e, v, label+float64(e))
					}
				}
			}
		}
		next += rows
	}
	if next != d.Len() {
		t.Fatalf("an epoch of batches of %d gave %d rows of %d", l.Size(), next, d.Len())
	}
}

// valueAt is element i of a data set's or a batch's slice, as a float64.
func valueAt(backing any, i int) float64 {
	switch s := backing.(type) {
	case []float32:
		return float64(s[i])
	case []float64:
		return s[i]
	case []int32:
		return float64(s[i])
	case []int64:
		return float64(s[i])
	}
	panic(fmt.Sprintf("unexpected %T", backing))
}
