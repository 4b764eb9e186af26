package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"gorgonia.org/tensor"
)

// Column is one named tensor of a data set: its leading dimension counts
// the rows, the others shape one row.
type Column struct {
	Name string
	Data *tensor.Dense
}

// Tensors is a data set held in memory: columns of float32, float64,
// int32, int64 or uint8 tensors with a common number of rows. Its methods
// copy rows; the columns' tensors are its own once given to NewTensors.
type Tensors struct {
	cols []column
	rows int
}

// column is a Column with its backing slice and the size of one row.
type column struct {
	name    string
	t       *tensor.Dense
	backing any // t's data: []float32, []float64, []int32, []int64 or []uint8
	width   int // elements per row
}

// NewTensors makes a data set of the columns, which must have distinct
// names, a supported dtype, contiguous data, at least one dimension and
// the same leading size.
func NewTensors(cols ...Column) (*Tensors, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("data: NewTensors: no columns")
	}
	d := &Tensors{}
	for i, c := range cols {
		if c.Data == nil {
			return nil, fmt.Errorf("data: column %q has no tensor", c.Name)
		}
		if slices.ContainsFunc(cols[:i], func(o Column) bool { return o.Name == c.Name }) {
			return nil, fmt.Errorf("data: two columns are named %q", c.Name)
		}
		shape := c.Data.Shape()
		if len(shape) == 0 || c.Data.IsScalar() {
			return nil, fmt.Errorf("data: column %q is a scalar; want a leading dimension of rows", c.Name)
		}
		if c.Data.IsView() || !c.Data.IsNativelyAccessible() {
			return nil, fmt.Errorf("data: column %q is a view; give a contiguous tensor", c.Name)
		}
		backing, err := backingOf(c.Data)
		if err != nil {
			return nil, fmt.Errorf("data: column %q: %w", c.Name, err)
		}
		if i == 0 {
			d.rows = shape[0]
		} else if shape[0] != d.rows {
			return nil, fmt.Errorf("data: column %q has %d rows and column %q %d", c.Name, shape[0], cols[0].Name, d.rows)
		}
		d.cols = append(d.cols, column{name: c.Name, t: c.Data, backing: backing, width: product(shape[1:])})
	}
	return d, nil
}

// A nil *Tensors (a reader's result whose error was ignored) is a data
// set of no rows and no columns: its methods that give something give
// nothing, and those that could fail fail, saying so (errNilTensors).

// errNilTensors is the error of method what on a nil *Tensors.
func errNilTensors(what string) error {
	return fmt.Errorf("data: %s on a nil *Tensors: make one with data.NewTensors or a reader (was its error ignored?)", what)
}

// Len is the number of rows.
func (d *Tensors) Len() int {
	if d == nil {
		return 0
	}
	return d.rows
}

// Names returns the columns' names, in order.
func (d *Tensors) Names() []string {
	if d == nil {
		return nil
	}
	names := make([]string, len(d.cols))
	for i, c := range d.cols {
		names[i] = c.name
	}
	return names
}

// Column returns the named column's tensor (not a copy), or nil.
func (d *Tensors) Column(name string) *tensor.Dense {
	if d == nil {
		return nil
	}
	for _, c := range d.cols {
		if c.name == name {
			return c.t
		}
	}
	return nil
}

// Reshape gives each row of the named column the shape row, keeping its
// elements in order: Reshape("x", 784) flattens 28×28 images for a
// linear layer. The number of elements per row must stay the same.
func (d *Tensors) Reshape(name string, row ...int) error {
	if d == nil {
		return errNilTensors("Reshape")
	}
	for _, c := range d.cols {
		if c.name != name {
			continue
		}
		if slices.ContainsFunc(row, func(n int) bool { return n < 0 }) {
			return fmt.Errorf("data: Reshape: shape %v has a negative dimension", row)
		}
		if n, ok := product64(row...); !ok || n != int64(c.width) {
			holds := "more than an int64 counts"
			if ok {
				holds = strconv.FormatInt(n, 10)
			}
			return fmt.Errorf("data: Reshape: rows of column %q hold %d elements, shape %v holds %s", name, c.width, row, holds)
		}
		return c.t.Reshape(append([]int{d.rows}, row...)...)
	}
	return fmt.Errorf("data: Reshape: no column is named %q", name)
}

// Split returns a random split of d's rows: round(testFraction·Len()) rows
// go to test and the others to train, after a permutation seeded with
// seed. Both hold copies; d is unchanged. testFraction must be in [0, 1]
// (0 puts every row in train, 1 every row in test); anything else, NaN
// included, is an error.
func (d *Tensors) Split(testFraction float64, seed uint64) (train, test *Tensors, err error) {
	if d == nil {
		return nil, nil, errNilTensors("Split")
	}
	if !(testFraction >= 0 && testFraction <= 1) {
		return nil, nil, fmt.Errorf("data: Split: test fraction %v is not in [0, 1]", testFraction)
	}
	if err := checkBytes(fmt.Sprintf("data: Split: a permutation of %d rows", d.rows), d.rows, strconv.IntSize/8); err != nil {
		return nil, nil, err
	}
	perm := newRand(seed).Perm(d.rows)
	nTest := int(math.Round(testFraction * float64(d.rows)))
	return d.rowsOf(perm[nTest:]), d.rowsOf(perm[:nTest]), nil
}

// rowsOf returns a data set holding copies of the given rows of d, in that
// order.
func (d *Tensors) rowsOf(idx []int) *Tensors {
	out := &Tensors{rows: len(idx), cols: make([]column, len(d.cols))}
	for k, c := range d.cols {
		shape := append([]int{len(idx)}, c.t.Shape()[1:]...)
		backing := gather(c.backing, c.width, idx)
		out.cols[k] = column{name: c.name, backing: backing, width: c.width,
			t: tensor.New(tensor.WithShape(shape...), tensor.WithBacking(backing))}
	}
	return out
}

// Shuffle permutes d's rows in place, every column alike, with a shuffle
// seeded with seed: give each epoch its own seed. Row i ends up holding
// the old row rand.New(rand.NewPCG(seed, seed)).Perm(Len())[i], the
// permutation Split takes. It allocates nothing.
func (d *Tensors) Shuffle(seed uint64) {
	if d == nil {
		return
	}
	for _, c := range d.cols {
		shuffleRows(c.backing, c.width, d.rows, newRand(seed))
	}
}

// Batches is the number of batches of size rows that cover every row once:
// Len()/size rounded up (0 if size is not positive).
func (d *Tensors) Batches(size int) int {
	if d == nil || size <= 0 {
		return 0
	}
	n := d.rows / size
	if d.rows%size != 0 {
		n++
	}
	return n
}

// BatchLen is the number of rows in batch i of size rows: size, or what is
// left for the last batch; 0 for a batch past the end.
func (d *Tensors) BatchLen(i, size int) int {
	if i < 0 || size <= 0 || i >= d.Batches(size) {
		return 0
	}
	return min(size, d.Len()-i*size)
}

// Batch copies batch i, rows i·size up to min((i+1)·size, Len()), into
// dst: one tensor per column, in column order, each with BatchLen(i, size)
// rows (so the last batch goes into smaller tensors than the others; a
// Loader keeps both) and a column's number of elements per row, in any
// shape. A float32 or float64 tensor takes any column, converting (labels
// become float class indices, as CrossEntropy takes them); an int32 or
// int64 tensor takes integer columns, and int32 errors on a value out of
// its range. Batch allocates nothing; on error dst may be partly filled.
func (d *Tensors) Batch(i, size int, dst ...*tensor.Dense) error {
	n := d.BatchLen(i, size)
	switch {
	case d == nil:
		return errNilTensors("Batch")
	case size <= 0:
		return fmt.Errorf("data: batch %d of size %d: the batch size is not positive", i, size)
	case n == 0:
		return fmt.Errorf("data: batch %d of size %d: the data set has %d batches of %d rows (%d in all)", i, size, d.Batches(size), size, d.rows)
	case len(dst) != len(d.cols):
		return fmt.Errorf("data: batch %d: %d tensors for %d columns", i, len(dst), len(d.cols))
	}
	for k, c := range d.cols {
		t := dst[k]
		if t != nil && t.IsView() {
			return fmt.Errorf("data: batch %d, column %q: the tensor is a view; give a contiguous one", i, c.name)
		}
		if t == nil || len(t.Shape()) == 0 || t.IsScalar() || t.Shape()[0] != n || t.Size() != n*c.width {
			return fmt.Errorf("data: batch %d, column %q: want a tensor of %d rows of %d elements, got shape %v", i, c.name, n, c.width, shapeOf(t))
		}
		if err := fill(t, c.backing, i*size*c.width, n*c.width); err != nil {
			return fmt.Errorf("data: batch %d, column %q: %w", i, c.name, err)
		}
	}
	return nil
}

// shapeOf is t's shape, or nil for a nil tensor.
func shapeOf(t *tensor.Dense) tensor.Shape {
	if t == nil {
		return nil
	}
	return t.Shape()
}

// newRand returns the generator behind Split and Shuffle, so that a seed
// always gives the same order.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed))
}

// product multiplies dims.
func product(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

// Argmax returns the index of the largest of xs (the first of equals): the
// class a row of logits predicts.
func Argmax(xs []float64) int {
	best := 0
	for i, v := range xs {
		if v > xs[best] {
			best = i
		}
	}
	return best
}
