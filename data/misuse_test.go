package data

import (
	"testing"

	"gorgonia.org/tensor"
)

// A nil *Tensors or *Loader (a result whose error was ignored), or a zero
// Loader, is empty: Len and the like are 0, and what could fail is an
// error saying so; each panicked. A nil writer for NewProgress reports
// nothing; it panicked at the first Add.
func TestNilLoaderAndTensors(t *testing.T) {
	var d *Tensors
	var l *Loader
	dst := tensor.New(tensor.WithShape(1), tensor.Of(tensor.Float64))
	_, _, splitErr := d.Split(0.5, 1)
	_, batchErr := l.Batch(0)
	_, zeroErr := (&Loader{}).Batch(0)
	const tensors = " on a nil *Tensors: make one with data.NewTensors or a reader (was its error ignored?)"
	const loader = " on a nil or zero Loader: make one with data.NewLoader (was its error ignored?)"
	for _, c := range []struct {
		err  error
		want string
	}{
		{d.Batch(0, 1, dst), "data: Batch" + tensors},
		{d.Reshape("x", 2), "data: Reshape" + tensors},
		{splitErr, "data: Split" + tensors},
		{batchErr, "data: Loader.Batch" + loader},
		{zeroErr, "data: Loader.Batch" + loader},
		{l.Shard(0, 2), "data: Loader.Shard" + loader},
	} {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("got  %v\nwant %s", c.err, c.want)
		}
	}
	d.Shuffle(1)
	if d.Len() != 0 || d.Names() != nil || d.Column("x") != nil || d.Batches(2) != 0 || d.BatchLen(0, 2) != 0 || l.Len() != 0 || l.Size() != 0 {
		t.Errorf("a nil data set or Loader is not empty: %d rows, names %v, %d batches, %d in a Loader of size %d", d.Len(), d.Names(), d.Batches(2), l.Len(), l.Size())
	}
	p := NewProgress(nil, 10, "epoch 1")
	p.Add(5, 0.5)
	p.Finish("done")
	if got := p.Loss(); got != 0.5 {
		t.Errorf("a Progress writing nowhere has loss %v, want 0.5", got)
	}
}
