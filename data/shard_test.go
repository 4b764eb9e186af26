package data

import (
	"math"
	"slices"
	"testing"

	"gorgonia.org/tensor"
)

// TestLoaderShard: 10 rows in batches of 2 on 2 ranks are 2 global batches
// of 4 rows (rows 8 and 9 left out); rank 0 takes rows 0–1 then 4–5, rank
// 1 rows 2–3 then 6–7, and together batch i is one process's batch i of
// 4 rows.
func TestLoaderShard(t *testing.T) {
	d := numbered(t, 10)
	whole, err := NewLoader(d, 4, tensor.Float64, tensor.Float64)
	if err != nil {
		t.Fatal(err)
	}
	want := [][][]float64{{{0, 1}, {4, 5}}, {{2, 3}, {6, 7}}} // [rank][batch] labels
	for rank := range 2 {
		l, err := NewLoader(d, 2, tensor.Float64, tensor.Float64)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Shard(rank, 2); err != nil {
			t.Fatal(err)
		}
		if l.Len() != 2 {
			t.Fatalf("rank %d: %d batches, want 2", rank, l.Len())
		}
		for i := range l.Len() {
			b, err := l.Batch(i)
			if err != nil {
				t.Fatal(err)
			}
			if got := b[1].Float64s(); !slices.Equal(got, want[rank][i]) {
				t.Errorf("rank %d, batch %d: labels %v, want %v", rank, i, got, want[rank][i])
			}
			if got, w := b[0].Float64s(), []float64{want[rank][i][0], 2 * want[rank][i][0], want[rank][i][1], 2 * want[rank][i][1]}; !slices.Equal(got, w) {
				t.Errorf("rank %d, batch %d: x %v, want %v", rank, i, got, w)
			}
			g, err := whole.Batch(i)
			if err != nil {
				t.Fatal(err)
			}
			if got := g[1].Float64s()[2*rank : 2*rank+2]; !slices.Equal(got, want[rank][i]) {
				t.Errorf("rank %d, batch %d: one process's batch holds %v there, not %v", rank, i, got, want[rank][i])
			}
		}
		if _, err := l.Batch(2); err == nil || err.Error() != "data: batch 2 of a Loader sharded 2 ways: it has 2 batches" {
			t.Errorf("batch past the end: %v", err)
		}
	}
	l, _ := NewLoader(d, 4)
	for _, c := range []struct {
		rank, ranks int
		want        string
	}{
		{2, 2, "data: Loader.Shard: rank 2 is not in [0, 2)"},
		{0, 0, "data: Loader.Shard: rank 0 is not in [0, 0)"},
		{0, 3, "data: Loader.Shard: 10 rows make no global batch of 3 ranks × 4 rows"},
	} {
		if err := l.Shard(c.rank, c.ranks); err == nil || err.Error() != c.want {
			t.Errorf("Shard(%d, %d): %v, want %q", c.rank, c.ranks, err, c.want)
		}
	}
}

// TestLoaderShardOverflow: a global batch of more rows than an int counts
// (batch size MaxInt on 2 ranks, 2 rows on 2⁶² ranks) holds more rows than
// any data set, an error as for any global batch past the rows; the
// product wrapped to a negative number of rows, and the Loader gave a
// negative or zero number of batches without an error.
func TestLoaderShardOverflow(t *testing.T) {
	d := numbered(t, 10)
	for _, c := range []struct {
		size, rank, ranks int
		want              string
	}{
		{math.MaxInt, 0, 2, "data: Loader.Shard: 10 rows make no global batch of 2 ranks × 9223372036854775807 rows"},
		{2, 1, 1 << 62, "data: Loader.Shard: 10 rows make no global batch of 4611686018427387904 ranks × 2 rows"},
		{math.MaxInt, 1, math.MaxInt, "data: Loader.Shard: 10 rows make no global batch of 9223372036854775807 ranks × 9223372036854775807 rows"},
	} {
		l, err := NewLoader(d, c.size)
		if err != nil {
			t.Fatal(err)
		}
		want := (10 + c.size - 1) / c.size // ⌈10/size⌉, without overflow for size 2
		if c.size == math.MaxInt {
			want = 1
		}
		if err := l.Shard(c.rank, c.ranks); err == nil || err.Error() != c.want {
			t.Errorf("size %d, Shard(%d, %d): %v (%d batches), want %q", c.size, c.rank, c.ranks, err, l.Len(), c.want)
		}
		if n := l.Len(); n != want {
			t.Errorf("size %d, Shard(%d, %d) refused: %d batches, want the unsharded %d", c.size, c.rank, c.ranks, n, want)
		}
	}
}
