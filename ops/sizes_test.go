package ops

import (
	"math"
	"strings"
	"testing"
)

func TestSizeArithmetic(t *testing.T) {
	const M = math.MaxInt
	for _, c := range []struct {
		name string
		f    func(...int) (int, bool)
		args []int
		want int
		ok   bool
	}{
		{"sum", addSizes, []int{3, 4, 5}, 12, true},
		{"sum at MaxInt", addSizes, []int{M - 2, 1, 1}, M, true},
		{"sum past MaxInt", addSizes, []int{M - 2, 1, 2}, 0, false},
		{"product", mulSizes, []int{3, 4, 5}, 60, true},
		{"product at MaxInt", mulSizes, []int{7, 7, 73, 127, 337, 92737, 649657}, M, true},
		{"product past MaxInt", mulSizes, []int{1 << 62, 2}, 0, false},
		{"product wrapping to zero", mulSizes, []int{1 << 32, 1 << 32, 0}, 0, false},
		{"empty product", mulSizes, []int{0, 1 << 62}, 0, true},
	} {
		if got, ok := c.f(c.args...); got != c.want || ok != c.ok {
			t.Errorf("case %s: got %d, %v, want %d, %v", c.name, got, ok, c.want, c.ok)
		}
	}
	if f := flops(2, 1<<40, 1<<40); f != math.MaxInt64 {
		t.Errorf("flops past MaxInt64: got %d, want it to saturate", f)
	}
	if f := flops(1<<40, 1<<40, 0); f != 0 {
		t.Errorf("flops of nothing: got %d, want 0", f)
	}
}

// The output lengths by PyTorch's formulas, computed by hand, and the
// settings whose arithmetic overflows refused, right at the edge.
func TestWindowLengths(t *testing.T) {
	const M = math.MaxInt
	conv := func(a window) (int, error) { return a.convOut() }
	pool := func(a window) (int, error) { return a.poolOut(false) }
	poolCeil := func(a window) (int, error) { return a.poolOut(true) }
	transposed := func(a window) (int, error) { return a.transposedOut(1) }
	for _, c := range []struct {
		name string
		f    func(window) (int, error)
		a    window
		want int // -1: an error
	}{
		{"conv", conv, window{in: 10, before: 1, after: 2, k: 3, stride: 2, dilation: 2}, 5},  // (10+3-4-1)/2+1
		{"conv too small", conv, window{in: 2, k: 3, stride: 1, dilation: 1}, 0},              // no window fits
		{"conv huge stride", conv, window{in: 10, k: 3, stride: M - 12, dilation: 1}, 1},      // in+stride+reach fits
		{"conv stride overflow", conv, window{in: 10, k: 3, stride: M - 11, dilation: 1}, -1}, // one more does not
		{"conv padding at the edge", conv, window{in: 1, before: M / 2, after: M/2 - 3, k: 3, stride: 1, dilation: 1}, M - 5},
		{"conv padding overflow", conv, window{in: 5, before: M, after: M, k: 3, stride: 1, dilation: 1}, -1},
		{"conv dilation overflow", conv, window{in: 5, k: 5, stride: 1, dilation: 1 << 62}, -1},
		{"conv dilation that fits", conv, window{in: 5, k: 2, stride: 1, dilation: 1 << 61}, 0},
		{"pool", pool, window{in: 7, before: 1, after: 1, k: 3, stride: 2, dilation: 1}, 4},    // (7+2-2-1)/2+1
		{"pool ceil", poolCeil, window{in: 8, k: 3, stride: 3, dilation: 1}, 3},                // ⌈(8-3)/3⌉+1
		{"pool ceil past the input", poolCeil, window{in: 6, k: 3, stride: 3, dilation: 1}, 2}, // a third window would start at 6
		{"pool padding overflow", pool, window{in: 5, before: M / 2, after: M / 2, k: M, stride: 1, dilation: 1}, -1},
		{"transposed", transposed, window{in: 4, before: 1, after: 1, k: 3, stride: 2, dilation: 1}, 8}, // 3·2-2+2+1+1
		{"transposed empty", transposed, window{in: 0, k: 3, stride: 1, dilation: 1}, 0},
		{"transposed padded away", transposed, window{in: 1, before: 2, after: 2, k: 3, stride: 1, dilation: 1}, 0},
		{"transposed stride overflow", transposed, window{in: 5, k: 3, stride: M / 4, dilation: 1}, -1},
		{"transposed padding overflow", transposed, window{in: 5, before: M, after: M, k: 3, stride: 1, dilation: 1}, 0},
	} {
		got, err := c.f(c.a)
		switch {
		case c.want < 0 && (err == nil || !strings.Contains(err.Error(), "sizes overflow an int")):
			t.Errorf("case %s %+v: got %d, %v, want an overflow error", c.name, c.a, got, err)
		case c.want >= 0 && (err != nil || got != c.want):
			t.Errorf("case %s %+v: got %d, %v, want %d", c.name, c.a, got, err, c.want)
		}
	}
}
