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
