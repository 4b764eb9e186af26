package data

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"
)

// Loader cuts a data set into batches of a fixed size into tensors it owns
// and reuses: one set of Size rows (or of every row, if fewer), and one
// for a shorter last batch. A loop over an epoch allocates nothing:
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
	rank       int // this process's share, after Shard
	ranks      int // processes sharing the data set; 0 before Shard
}

// NewLoader returns a Loader of d in batches of size rows, filling tensors
// of the given dtypes, one per column, shaped as the column with size (or
// fewer) rows. Leave dtypes out to keep the columns' own. Its tensors hold
// the rows d has, however large size is: a size past Len() makes one batch
// of every row. A size that is not positive, and tensors that together
// pass graph.MemoryLimit, are errors.
func NewLoader(d *Tensors, size int, dtypes ...tensor.Dtype) (*Loader, error) {
	switch {
	case d == nil:
		return nil, fmt.Errorf("data: NewLoader: no data set (nil)")
	case size <= 0:
		return nil, fmt.Errorf("data: NewLoader: batch size %d is not positive", size)
	case d.rows == 0:
		return nil, fmt.Errorf("data: NewLoader: the data set is empty")
	case len(dtypes) != 0 && len(dtypes) != len(d.cols):
		return nil, fmt.Errorf("data: NewLoader: %d dtypes for %d columns", len(dtypes), len(d.cols))
	}
	full, rest := min(size, d.rows), 0 // rows of a full batch and of a shorter last one
	if size < d.rows {
		rest = d.rows % size
	}
	if len(dtypes) == 0 {
		dtypes = make([]tensor.Dtype, len(d.cols))
		for k, c := range d.cols {
			dtypes[k] = c.t.Dtype()
		}
	}
	total, ok := int64(0), true
	for k, c := range d.cols {
		elem, err := elemSize(dtypes[k])
		if err != nil {
			return nil, fmt.Errorf("data: NewLoader: column %q: %w", c.name, err)
		}
		b, fits := product64(full+rest, c.width, elem)
		ok = ok && fits && total <= math.MaxInt64-b
		total += b
	}
	if err := memoryError(fmt.Sprintf("data: NewLoader: a Loader of columns %q in batches of %d rows", d.Names(), full), total, ok); err != nil {
		return nil, err
	}
	l := &Loader{d: d, size: size}
	for k, c := range d.cols {
		l.full = append(l.full, batchTensor(dtypes[k], full, c.t.Shape()[1:]))
		if rest != 0 {
			l.last = append(l.last, batchTensor(dtypes[k], rest, c.t.Shape()[1:]))
		}
	}
	return l, nil
}

// elemSize is the bytes of an element of a dtype fill writes, or an error
// for another dtype.
func elemSize(dt tensor.Dtype) (int, error) {
	switch dt {
	case tensor.Float32, tensor.Int32:
		return 4, nil
	case tensor.Float64, tensor.Int64:
		return 8, nil
	}
	return 0, cannotFill(dt)
}

// batchTensor makes a tensor of rows rows shaped row, of a dtype fill
// writes (elemSize checked it).
func batchTensor(dt tensor.Dtype, rows int, row []int) *tensor.Dense {
	return tensor.New(tensor.WithShape(append([]int{rows}, row...)...), tensor.Of(dt))
}

// Len is the number of batches in an epoch.
func (l *Loader) Len() int {
	if l == nil {
		return 0
	}
	if l.ranks != 0 {
		return l.d.Len() / (l.size * l.ranks)
	}
	return l.d.Batches(l.size)
}

// Shard makes the Loader give process rank of ranks (each running the
// same Loader on the same data set, shuffled alike) its share of every
// global batch of Size()·ranks rows: batch i is rows (i·ranks+rank)·Size()
// onwards, so the ranks' batches i together are the rows one process
// would take as batch i of Size()·ranks rows. An incomplete last global
// batch is left out, so that every rank takes the same number of batches
// of the same size (PyTorch's DistributedSampler with drop_last). Shard
// fails where the data set holds no full global batch.
func (l *Loader) Shard(rank, ranks int) error {
	switch {
	case l == nil || l.d == nil:
		return errNilLoader("Shard")
	case ranks < 1 || rank < 0 || rank >= ranks:
		return fmt.Errorf("data: Loader.Shard: rank %d is not in [0, %d)", rank, ranks)
	case !fitsRows(l.d.Len(), l.size, ranks):
		return fmt.Errorf("data: Loader.Shard: %d rows make no global batch of %d ranks × %d rows", l.d.Len(), ranks, l.size)
	}
	l.rank, l.ranks = rank, ranks
	return nil
}

// fitsRows reports whether rows hold a global batch of ranks batches of
// size rows, a product that may overflow an int.
func fitsRows(rows, size, ranks int) bool {
	n, ok := product64(size, ranks)
	return ok && n <= int64(rows)
}

// Size is the number of rows of every batch but a shorter last one.
func (l *Loader) Size() int {
	if l == nil {
		return 0
	}
	return l.size
}

// errNilLoader is the error of method what on a nil or zero Loader (of
// which Len and Size are 0).
func errNilLoader(what string) error {
	return fmt.Errorf("data: Loader.%s on a nil or zero Loader: make one with data.NewLoader (was its error ignored?)", what)
}

// Batch fills and returns batch i, one tensor per column. The tensors are
// the Loader's, overwritten by the next call; the last batch comes in
// smaller ones when the size does not divide the data set.
func (l *Loader) Batch(i int) ([]*tensor.Dense, error) {
	if l == nil || l.d == nil {
		return nil, errNilLoader("Batch")
	}
	if l.ranks != 0 {
		if i < 0 || i >= l.Len() {
			return nil, fmt.Errorf("data: batch %d of a Loader sharded %d ways: it has %d batches", i, l.ranks, l.Len())
		}
		if err := l.d.Batch(i*l.ranks+l.rank, l.size, l.full...); err != nil {
			return nil, err
		}
		return l.full, nil
	}
	b := l.full
	if l.d.BatchLen(i, l.size) < l.size && l.last != nil {
		b = l.last
	}
	if err := l.d.Batch(i, l.size, b...); err != nil {
		return nil, err
	}
	return b, nil
}
