package data

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Dataset is a classification data set held in memory.
type Dataset struct {
	// X holds the features row-major: row i is X[i*Features : (i+1)*Features].
	X []float64
	// Y holds each row's class, in [0, Classes).
	Y []int
	// Features is the number of features per row.
	Features int
	// Classes is the number of classes.
	Classes int
}

// Len is the number of rows.
func (d Dataset) Len() int { return len(d.Y) }

// Split returns a random split of d's rows: round(testFraction*Len()) rows
// go to test and the rest to train, after a shuffle seeded with seed. Both
// hold copies of the rows; d is unchanged. testFraction is clamped to [0, 1].
// X must hold Len()×Features values, as the loaders of this package give.
func (d Dataset) Split(testFraction float64, seed uint64) (train, test Dataset) {
	if math.IsNaN(testFraction) {
		testFraction = 0
	}
	testFraction = min(max(testFraction, 0), 1)
	perm := newRand(seed).Perm(d.Len())
	nTest := int(math.Round(testFraction * float64(d.Len())))
	return d.rows(perm[nTest:]), d.rows(perm[:nTest])
}

// rows returns a Dataset holding copies of the given rows of d.
func (d Dataset) rows(idx []int) Dataset {
	out := Dataset{
		X:        make([]float64, 0, len(idx)*d.Features),
		Y:        make([]int, 0, len(idx)),
		Features: d.Features,
		Classes:  d.Classes,
	}
	for _, i := range idx {
		out.X = append(out.X, d.X[i*d.Features:(i+1)*d.Features]...)
		out.Y = append(out.Y, d.Y[i])
	}
	return out
}

// Shuffle permutes d's rows in place (X and Y together), with a shuffle
// seeded with seed: call it with a new seed before each epoch. X must hold
// Len()×Features values.
func (d Dataset) Shuffle(seed uint64) {
	f := d.Features
	newRand(seed).Shuffle(d.Len(), func(i, j int) {
		d.Y[i], d.Y[j] = d.Y[j], d.Y[i]
		for k := range f {
			d.X[i*f+k], d.X[j*f+k] = d.X[j*f+k], d.X[i*f+k]
		}
	})
}

// Batches is the number of batches of the given size that cover every row
// once: Len()/size rounded up (0 if size is not positive).
func (d Dataset) Batches(size int) int {
	if size <= 0 {
		return 0
	}
	return (d.Len() + size - 1) / size
}

// Batch copies batch i, rows i*size up to (i+1)*size, into x (size×Features
// values, row-major) and y (size class indices, as float64). Rows are taken
// modulo Len(), so the last batch of an epoch wraps around to the first rows
// and every batch is full, as a graph with a static batch size needs. x and
// y are the caller's, reused from batch to batch. It returns an error, and
// fills nothing, if i is negative, size is not positive, d is empty, or x or
// y has the wrong length, or d's X does not hold Len()×Features values.
func (d Dataset) Batch(i, size int, x, y []float64) error {
	switch {
	case i < 0 || size <= 0:
		return fmt.Errorf("data: batch %d of size %d: want a batch index ≥ 0 and a size > 0", i, size)
	case d.Len() == 0:
		return fmt.Errorf("data: batch %d: the data set is empty", i)
	case d.Features < 0 || len(d.X) != d.Len()*d.Features:
		return fmt.Errorf("data: the data set holds %d values for %d rows of %d features", len(d.X), d.Len(), d.Features)
	case len(x) != size*d.Features || len(y) != size:
		return fmt.Errorf("data: batch of %d rows of %d features needs x of length %d and y of length %d, got %d and %d",
			size, d.Features, size*d.Features, size, len(x), len(y))
	}
	f := d.Features
	row := (i % d.Len()) * (size % d.Len()) % d.Len() // i*size mod Len, without overflow
	for j := range size {
		copy(x[j*f:(j+1)*f], d.X[row*f:(row+1)*f])
		y[j] = float64(d.Y[row])
		if row++; row == d.Len() {
			row = 0
		}
	}
	return nil
}

// newRand returns the generator behind Split and Shuffle, so that the same
// seed always gives the same order.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed))
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
