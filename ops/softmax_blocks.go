package ops

import (
	"math"

	"github.com/nabla-go/nabla/internal/kernel/vmath"
)

// crossEntropyRows is crossEntropyKernel for rows of at most softmaxBlock
// classes, a block of rows at a time as softmaxRows takes them: each
// row's maximum by rowPeak (rowMax where it is NaN), the block's
// exponentials in one call of vmath.Exp64 rather than one a row, then
// each row's sum in order and its loss. Each loss is computed as
// expSum's is, so the results are the same bits: a maximum of -0 where
// rowMax finds +0 (or the reverse) changes no exponential, and m + log s
// is the same for m = ±0. The first label that is not a class index
// makes it return the error, as crossEntropyKernel does.
func crossEntropyRows[T float](out, logits []T, labels indexData, classes int) error {
	var buf [softmaxBlock]float64
	var peaks [softmaxBlock]float64
	per := softmaxBlock / classes
	rows := labels.len()
	for r0 := 0; r0 < rows; r0 += per {
		rs := min(per, rows-r0)
		for r := range rs {
			row := logits[(r0+r)*classes : (r0+r+1)*classes]
			m := float64(rowPeak(row))
			if m != m {
				m = rowMax(row)
			}
			peaks[r] = m
			b := buf[r*classes : (r+1)*classes]
			for k, v := range row {
				b[k] = float64(v) - m
			}
		}
		b := buf[:rs*classes]
		vmath.Exp64(b, b)
		for r := range rs {
			i := r0 + r
			c, err := classIndex(labels, classes, i)
			if err != nil {
				return err
			}
			var s float64
			for _, e := range b[r*classes : (r+1)*classes] {
				s += e
			}
			out[i] = T(peaks[r] + math.Log(s) - float64(logits[i*classes+c]))
		}
	}
	return nil
}

// sumsInOrder sets sums[r] to the sum, in order from 0, of row r of b,
// whose rows of live[r] elements follow one another: the additions of
// four rows run side by side, each row's in its own order, where one
// row's chain of additions would wait on itself.
func sumsInOrder(sums, b []float64, live []int32) {
	at, r := 0, 0
	next := func() []float64 {
		row := b[at : at+int(live[r])]
		at += len(row)
		r++
		return row
	}
	for r+4 <= len(sums) {
		r0 := r
		x0, x1, x2, x3 := next(), next(), next(), next()
		n := min(len(x0), len(x1), len(x2), len(x3))
		var s0, s1, s2, s3 float64
		y1, y2, y3 := x1[:n], x2[:n], x3[:n]
		for k, e := range x0[:n] {
			s0 += e
			s1 += y1[k]
			s2 += y2[k]
			s3 += y3[k]
		}
		sums[r0], sums[r0+1], sums[r0+2], sums[r0+3] = addInOrder(s0, x0[n:]), addInOrder(s1, x1[n:]), addInOrder(s2, x2[n:]), addInOrder(s3, x3[n:])
	}
	for r < len(sums) {
		r0 := r
		sums[r0] = addInOrder(0, next())
	}
}

// addInOrder is s + xs[0] + xs[1] + …, added one after another.
func addInOrder(s float64, xs []float64) float64 {
	for _, e := range xs {
		s += e
	}
	return s
}
