package conv

import (
	"math"
	"math/rand/v2"
	"testing"
)

// tapsCase is one call of Taps: rows outputs of n positions, ldy apart,
// over taps offsets into an input of size elements.
type tapsCase struct{ rows, n, ldy, taps, size int }

var tapsCases = []tapsCase{
	{1, 1, 1, 1, 1},
	{6, 64, 64, 25, 64 + 5*28},
	{6, 576, 576, 25, 28 * 28},
	{4, 64, 64, 150, 6 * 12 * 8 * 5},
	{5, 65, 70, 7, 100},
	{3, 31, 33, 3, 40},
	{2, 17, 17, 11, 90},
	{6, 129, 130, 2, 131},
	{1, 95, 95, 9, 200},
}

// TestTapsAgreesWithDefinition compares Taps, on the assembly kernels
// where they run, with its definition summed in float64, for both
// element types, on blocks that are full, partial and shorter than a
// vector; it also checks that Taps writes nothing past a row's n
// positions.
func TestTapsAgreesWithDefinition(t *testing.T) {
	t.Logf("assembly: %v", Available())
	for _, c := range tapsCases {
		t.Run("float32", func(t *testing.T) { checkTaps[float32](t, c, 1e-5) })
		t.Run("float64", func(t *testing.T) { checkTaps[float64](t, c, 1e-13) })
	}
}

func checkTaps[T Float](t *testing.T, c tapsCase, tol float64) {
	r := rand.New(rand.NewPCG(uint64(c.n), uint64(c.taps)))
	x := make([]T, c.size)
	for i := range x {
		x[i] = T(r.NormFloat64())
	}
	off := make([]int, c.taps)
	for i := range off {
		off[i] = r.IntN(c.size - c.n + 1)
	}
	w := make([]T, c.taps*c.rows)
	for i := range w {
		w[i] = T(r.NormFloat64())
	}
	const sentinel = 12345
	y := make([]T, (c.rows-1)*c.ldy+c.n+3)
	for i := range y {
		y[i] = sentinel
	}
	Taps(y, c.ldy, x, NewOffsets(off), w, c.rows, c.n)
	for row := range c.rows {
		for s := range c.ldy {
			i := row*c.ldy + s
			if i >= len(y) {
				break
			}
			if s >= c.n {
				if y[i] != sentinel {
					t.Fatalf("%+v: y[%d] (row %d, position %d) = %v, written past n", c, i, row, s, y[i])
				}
				continue
			}
			var want, mag float64
			for k, o := range off {
				p := float64(w[k*c.rows+row]) * float64(x[s+o])
				want += p
				mag += math.Abs(p)
			}
			if d := math.Abs(float64(y[i]) - want); d > tol*(mag+1) {
				t.Fatalf("%+v: row %d position %d: got %v, want %v", c, row, s, y[i], want)
			}
		}
	}
	for i := (c.rows-1)*c.ldy + c.n; i < len(y); i++ {
		if y[i] != sentinel {
			t.Fatalf("%+v: y[%d] = %v, written past the last row", c, i, y[i])
		}
	}
}

// TestCopyRows copies rows of widths around the vectors' lanes and checks
// every element of the destination: copied, or left as it was.
func TestCopyRows(t *testing.T) {
	for _, width := range []int{1, 7, 8, 9, 15, 16, 17, 24, 33} {
		t.Run("float32", func(t *testing.T) { checkCopyRows[float32](t, width) })
		t.Run("float64", func(t *testing.T) { checkCopyRows[float64](t, width) })
	}
}

func checkCopyRows[T Float](t *testing.T, width int) {
	const rows = 5
	lds, ldd := width+3, width+2
	src := make([]T, rows*lds)
	for i := range src {
		src[i] = T(i + 1)
	}
	dst := make([]T, rows*ldd)
	CopyRows(dst, ldd, src, lds, rows, width)
	for i := range rows {
		for j := range ldd {
			want := T(0)
			if j < width {
				want = src[i*lds+j]
			}
			if got := dst[i*ldd+j]; got != want {
				t.Fatalf("width %d: dst[%d][%d] = %v, want %v", width, i, j, got, want)
			}
		}
	}
}

// TestTapsRefusesShortSlices checks that Taps panics, rather than read
// or write outside its slices, where an offset runs past the input.
func TestTapsRefusesShortSlices(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for an offset past the input")
		}
	}()
	Taps(make([]float32, 16), 16, make([]float32, 20), NewOffsets([]int{5}), make([]float32, 1), 1, 16)
}

// TestNewOffsetsRefusesNegative checks that NewOffsets panics on a
// negative offset, which would read before the input.
func TestNewOffsetsRefusesNegative(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a negative offset")
		}
	}()
	NewOffsets([]int{3, -1})
}
