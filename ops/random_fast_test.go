package ops

import (
	"math"
	"testing"

	"github.com/nabla-go/nabla/internal/kernel/philox"
)

// normalReference32 is element at of a float32 normal draw by the
// reference path: Philox one block at a time, normalPair32 one pair at a
// time.
func normalReference32(s Stream, step uint64, at int) float32 {
	w := philox4x32([4]uint32{uint32(at / 4), uint32(step), uint32(step >> 32), s.ID},
		[2]uint32{uint32(s.Seed), uint32(s.Seed >> 32)})
	j := at % 4 &^ 1
	a, b := normalPair32(w[j], w[j+1])
	if at%2 == 1 {
		return b
	}
	return a
}

// philox.Pair, the branch-free pair of the fast loop, gives normalPair32's
// bits for words at both ends of the range, at the log's mantissa split
// and at every quarter-turn boundary, for all pairs of them, and for a
// million pairs from a generator of its own.
func TestNormalPairFastMatchesReference(t *testing.T) {
	words := []uint32{0, 1, 2, 255, 256, 1 << 30, 1 << 31, 3 << 30, 0xfffffeff, 0xffffff00, 0xffffffff}
	for _, q := range []uint32{1, 3, 5, 7} { // v = q/8 turns: 4v rounds half up
		w := q << 29
		words = append(words, w-257, w-256, w-255, w-1, w, w+1, w+255, w+256)
	}
	for _, m := range []float32{0.70710678118654752, 0.5, 0.99999994} {
		for _, e := range []int{-1, -2, -10, -31} { // u = m·2^e near the split
			u := float64(math.Ldexp(float64(m), e))
			w := uint32(u * 0x1p32)
			for d := uint32(0); d < 600; d += 97 {
				words = append(words, w-d, w+d)
			}
		}
	}
	check := func(w0, w1 uint32) {
		a, b := normalPair32(w0, w1)
		c, d := philox.Pair(w0, w1)
		if math.Float32bits(a) != math.Float32bits(c) || math.Float32bits(b) != math.Float32bits(d) {
			t.Fatalf("words %#08x, %#08x: fast pair (%v, %v), reference (%v, %v)", w0, w1, c, d, a, b)
		}
	}
	for _, w0 := range words {
		for _, w1 := range words {
			check(w0, w1)
		}
	}
	x := uint64(0x9e3779b97f4a7c15)
	for range 1 << 20 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		check(uint32(x), uint32(x>>32))
	}
}

// A float32 normal draw, filled by philox.Normals32 where it covers whole
// blocks and one block at a time at its ends, is the reference path's bit
// for bit: over seeds, stream ids, steps (both halves of the counter),
// offsets that start and end inside a block, and blocks near the top of
// the 32-bit block index.
func TestNormalFillFastMatchesReference(t *testing.T) {
	streams := []Stream{{}, {Seed: 1, ID: 2}, {Seed: 0x0123456789abcdef, ID: 7}, {Seed: math.MaxUint64, ID: math.MaxUint32}}
	steps := []uint64{0, 1, 1<<32 + 5, math.MaxUint64}
	offsets := []int{0, 1, 2, 3, 4, 5, 8, 4 * (1<<32 - 40)}
	out := make([]float32, 131)
	for _, s := range streams {
		for _, step := range steps {
			for _, off := range offsets {
				for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 64, 131} {
					o := out[:n]
					fillRandom(o, off, normalKind, s, step)
					for i, got := range o {
						if want := normalReference32(s, step, off+i); math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("stream %+v step %d: element %d of a draw of %d from %d: got %v, want %v", s, step, off+i, n, off, got, want)
						}
					}
				}
			}
		}
	}
}

// normalReference64 is element at of a float64 normal draw by the
// reference path: Philox one block at a time, blockValues' Box–Muller
// pair with math.Log and math.Sincos.
func normalReference64(s Stream, step uint64, at int) float64 {
	var v [2]float64
	blockValues(normalKind, s.block(step, uint32(at/2)), v[:])
	return v[at%2]
}

// A float64 normal draw, filled by philox.Normals64 in runs of 8 blocks
// and by the scalar code around them, is the scalar code's bit for bit:
// over seeds, stream ids, steps, offsets and lengths that start and end
// inside a run, blocks near the top of the 32-bit block index, and 2²⁰
// values of one stream (every octant of the sine and cosine, and both
// sides of the log's split at √½, many times over).
func TestNormal64FillFastMatchesReference(t *testing.T) {
	streams := []Stream{{}, {Seed: 1, ID: 2}, {Seed: 0x0123456789abcdef, ID: 7}, {Seed: math.MaxUint64, ID: math.MaxUint32}}
	steps := []uint64{0, 1, 1<<32 + 5, math.MaxUint64}
	offsets := []int{0, 1, 2, 3, 16, 17, 2 * (1<<32 - 40)}
	out := make([]float64, 1<<20)
	check := func(s Stream, step uint64, off int, o []float64) {
		t.Helper()
		for i, got := range o {
			if want := normalReference64(s, step, off+i); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("stream %+v step %d: element %d of a draw of %d from %d: got %v, want %v", s, step, off+i, len(o), off, got, want)
			}
		}
	}
	for _, s := range streams {
		for _, step := range steps {
			for _, off := range offsets {
				for _, n := range []int{1, 2, 15, 16, 17, 31, 32, 33, 48, 100, 131} {
					fillRandom(out[:n], off, normalKind, s, step)
					check(s, step, off, out[:n])
				}
			}
		}
	}
	fillRandom(out, 0, normalKind, Stream{Seed: 42, ID: 3}, 9)
	check(Stream{Seed: 42, ID: 3}, 9, 0, out)
}
