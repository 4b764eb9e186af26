package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// crossEntropyRows, a block of rows at a time, gives crossEntropyEach's
// bits, row by row, in both dtypes, for 1 to softmaxBlock classes and row
// counts that leave a partial block, with NaN, ±Inf, rows of -Inf and
// zeros of both signs (a row whose maximum is ±0) among the logits; and
// the first label out of range gives the same error with the same rows
// before it.
func TestCrossEntropyRowsGivesTheBits(t *testing.T) {
	for _, classes := range []int{1, 3, 62, 70, softmaxBlock} {
		rows := 2*(softmaxBlock/classes) + 3
		rng := rand.New(rand.NewPCG(uint64(classes), 4))
		xs := make([]float64, rows*classes)
		for i := range xs {
			xs[i] = 3 * rng.NormFloat64()
			switch rng.IntN(60) {
			case 0:
				xs[i] = math.NaN()
			case 1:
				xs[i] = math.Inf(1)
			case 2:
				xs[i] = math.Inf(-1)
			}
		}
		for k := range classes { // a row of -Inf, and one whose maximum is -0 then +0
			xs[k] = math.Inf(-1)
			xs[classes+k] = -1 - float64(k)
			xs[2*classes+k] = -1 - float64(k)
		}
		xs[classes], xs[2*classes] = math.Copysign(0, -1), math.Copysign(0, -1)
		xs[2*classes+classes-1] = 0
		labels := make([]int64, rows)
		for i := range labels {
			labels[i] = int64(rng.IntN(classes))
		}
		t.Run(fmt.Sprintf("classes=%d", classes), func(t *testing.T) {
			checkCrossEntropyRows[float32](t, xs, labels, classes)
			checkCrossEntropyRows[float64](t, xs, labels, classes)
		})
	}
}

func checkCrossEntropyRows[T float](t *testing.T, xs []float64, labels []int64, classes int) {
	logits := make([]T, len(xs))
	for i, v := range xs {
		logits[i] = T(v)
	}
	for _, bad := range []int{-1, len(labels) - 2} {
		ls := append([]int64(nil), labels...)
		if bad >= 0 {
			ls[bad] = int64(classes)
		}
		got, want := make([]T, len(ls)), make([]T, len(ls))
		errGot := crossEntropyRows(got, logits, indexData{i64: ls}, classes)
		errWant := crossEntropyEach(want, logits, indexData{i64: ls}, classes)
		if fmt.Sprint(errGot) != fmt.Sprint(errWant) {
			t.Fatalf("bad label at %d: error %v, want %v", bad, errGot, errWant)
		}
		end := len(ls)
		if bad >= 0 {
			end = bad
		}
		for i := range end {
			if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("row %d: %v, one row at a time %v", i, got[i], want[i])
			}
		}
	}
}
