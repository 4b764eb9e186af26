package data

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clock returns a clock that starts at 0 and advances by step at each read.
func clock(step time.Duration) func() time.Time {
	t := time.Unix(0, 0)
	return func() time.Time {
		t = t.Add(step)
		return t
	}
}

// Off a terminal, Progress writes one plain line per task at Finish.
func TestProgressPlain(t *testing.T) {
	for _, tc := range []struct {
		description, summary string
		rows                 []int
		losses               []float64
		want                 string
	}{
		{"epoch 1/3", "loss 0.5", []int{3, 2}, []float64{1, 2}, "epoch 1/3: loss 0.5\n"},
		// Loss (3·1 + 2·2)/5 = 1.4; 5 rows in 1 s (the clock reads once at
		// the start and once in Throughput).
		{"epoch", "", []int{3, 2}, []float64{1, 2}, "epoch: 5/10 rows, loss 1.4000, 5 rows/s\n"},
		{"eval", "", nil, nil, "eval: 0/10 rows, loss NaN, 0 rows/s\n"},
	} {
		var buf bytes.Buffer
		p := newProgress(&buf, 10, tc.description, false, clock(time.Second), 0)
		for i, n := range tc.rows {
			p.Add(n, tc.losses[i])
			if buf.Len() != 0 {
				t.Errorf("case %v: got %q before Finish, want nothing", tc.description, buf.String())
			}
		}
		p.Finish(tc.summary)
		if got := buf.String(); got != tc.want {
			t.Errorf("case %v: got %q, want %q", tc.description, got, tc.want)
		}
	}
	p := NewProgress(&bytes.Buffer{}, 4, "")
	p.Add(4, 0.25)
	if p.Loss() != 0.25 || math.IsNaN(p.Throughput()) {
		t.Errorf("got loss %v, throughput %v, want 0.25 and a number", p.Loss(), p.Throughput())
	}
}

// A file is not a terminal either: no bar, no control characters.
func TestProgressFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for epoch, loss := range []string{"loss 0.9", "loss 0.4"} {
		p := NewProgress(f, 4, []string{"epoch 1", "epoch 2"}[epoch])
		for range 4 {
			p.Add(1, 0.5)
		}
		p.Finish(loss)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "epoch 1: loss 0.9\nepoch 2: loss 0.4\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// On a terminal the bar shows the loss and the rows per second, and
// Finish clears it before the summary.
func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 100, "epoch 1", true, clock(time.Second), 0)
	for range 10 {
		p.Add(10, 0.125)
	}
	p.Finish("done")
	out := buf.String()
	for _, want := range []string{"epoch 1 loss 0.1250", "rows/s", "(90/100, ", "\repoch 1: done\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("got %q, want it to contain %q", out, want)
		}
	}
}
