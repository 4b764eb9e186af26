package data

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Off a terminal, Progress writes one plain line per task at Finish.
func TestProgressPlain(t *testing.T) {
	for _, tc := range []struct {
		description, summary string
		steps                []int
		want                 string
	}{
		{"epoch 1/3", "loss 0.5", []int{3, 2}, "epoch 1/3: loss 0.5\n"},
		{"epoch", "", []int{3, 2}, "epoch: 5/10\n"},
		{"eval", "", nil, "eval: 0/10\n"},
	} {
		var buf bytes.Buffer
		p := NewProgress(&buf, 10, tc.description)
		for _, n := range tc.steps {
			p.Add(n)
			if buf.Len() != 0 {
				t.Errorf("case %v: got %q before Finish, want nothing", tc.description, buf.String())
			}
		}
		p.Finish(tc.summary)
		if got := buf.String(); got != tc.want {
			t.Errorf("case %v: got %q, want %q", tc.description, got, tc.want)
		}
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
		p := NewProgress(f, 4, "epoch "+strconv.Itoa(epoch+1))
		for range 4 {
			p.Add(1)
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
