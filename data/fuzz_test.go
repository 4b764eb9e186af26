package data

import (
	"bytes"
	"testing"
)

// The parsers return a tensor or an error for any input, never panic, and
// a tensor holds the elements its shape counts.
func FuzzNPY(f *testing.F) {
	f.Add(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", make([]byte, 8)))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseNPY(bytes.NewReader(b))
		if err == nil && d.Size() != product(d.Shape()) {
			t.Errorf("got %d elements for shape %v", d.Size(), d.Shape())
		}
	})
}

func FuzzIDX(f *testing.F) {
	f.Add(tinyImages)
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseIDX(maybeGzip(bytes.NewReader(b)))
		if err == nil && d.Size() != product(d.Shape()) {
			t.Errorf("got %d elements for shape %v", d.Size(), d.Shape())
		}
	})
}
