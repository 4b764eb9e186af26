package data

import (
	"fmt"

	"gorgonia.org/tensor"
)

// Loader cuts a data set into batches of a fixed size into tensors it owns
// and reuses: one set of Size rows, and one for a shorter last batch. A
// loop over an epoch allocates nothing:
//
//	for i := range l.Len() {
//		b, err := l.Batch(i) // b[k] holds column k's rows
//		...
//	}
//
// Shuffling the data set between epochs is seen by the next Batch.
type Loader struct {
	d          *Tensors
	size       int
	full, last []*tensor.Dense
}

// NewLoader returns a Loader of d in batches of size rows, filling tensors
// of the given dtypes, one per column, shaped as the column with size (or
// fewer) rows. Leave dtypes out to keep the columns' own.
func NewLoader(d *Tensors, size int, dtypes ...tensor.Dtype) (*Loader, error) {
	if size <= 0 {
		return nil, fmt.Errorf("data: NewLoader: batch size %d is not positive", size)
	}
	if d.rows == 0 {
		return nil, fmt.Errorf("data: NewLoader: the data set is empty")
	}
	if len(dtypes) != 0 && len(dtypes) != len(d.cols) {
		return nil, fmt.Errorf("data: NewLoader: %d dtypes for %d columns", len(dtypes), len(d.cols))
	}
	l := &Loader{d: d, size: size}
	for k, c := range d.cols {
		dt := c.t.Dtype()
		if len(dtypes) != 0 {
			dt = dtypes[k]
		}
		full, err := batchTensor(dt, size, c.t.Shape()[1:])
		if err != nil {
			return nil, fmt.Errorf("data: NewLoader: column %q: %w", c.name, err)
		}
		l.full = append(l.full, full)
		if rest := d.rows % size; rest != 0 {
			last, _ := batchTensor(dt, rest, c.t.Shape()[1:])
			l.last = append(l.last, last)
		}
	}
	return l, nil
}

// batchTensor makes a tensor of rows rows shaped row, of a dtype fill
// writes.
func batchTensor(dt tensor.Dtype, rows int, row []int) (*tensor.Dense, error) {
	n := rows * product(row)
	var backing any
	switch dt {
	case tensor.Float32:
		backing = make([]float32, n)
	case tensor.Float64:
		backing = make([]float64, n)
	case tensor.Int32:
		backing = make([]int32, n)
	case tensor.Int64:
		backing = make([]int64, n)
	default:
		return nil, fmt.Errorf("cannot fill a %v tensor (float32, float64, int32 or int64)", dt)
	}
	return tensor.New(tensor.WithShape(append([]int{rows}, row...)...), tensor.WithBacking(backing)), nil
}

// Len is the number of batches in an epoch.
func (l *Loader) Len() int { return l.d.Batches(l.size) }

// Size is the number of rows of every batch but a shorter last one.
func (l *Loader) Size() int { return l.size }

// Batch fills and returns batch i, one tensor per column. The tensors are
// the Loader's, overwritten by the next call; the last batch comes in
// smaller ones when the size does not divide the data set.
func (l *Loader) Batch(i int) ([]*tensor.Dense, error) {
	b := l.full
	if l.d.BatchLen(i, l.size) < l.size && l.last != nil {
		b = l.last
	}
	if err := l.d.Batch(i, l.size, b...); err != nil {
		return nil, err
	}
	return b, nil
}
