package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// idxFile returns an IDX file: two zero bytes, the element type, the number
// of dimensions, each dimension as a big-endian uint32, then data.
func idxFile(elemType byte, dims []uint32, data []byte) []byte {
	out := []byte{0, 0, elemType, byte(len(dims))}
	for _, d := range dims {
		out = binary.BigEndian.AppendUint32(out, d)
	}
	return append(out, data...)
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeFile writes content to dir/name and returns the path.
func writeFile(t *testing.T, dir, name string, content []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Three 2×2 images and their labels.
var (
	tinyImages = idxFile(0x08, []uint32{3, 2, 2}, []byte{0, 255, 51, 102, 1, 2, 3, 4, 255, 255, 0, 0})
	tinyLabels = idxFile(0x08, []uint32{3}, []byte{4, 0, 2})
)

func TestLoadIDX(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name           string
		images, labels []byte
	}{
		{"plain", tinyImages, tinyLabels},
		{"gzip", gzipped(t, tinyImages), gzipped(t, tinyLabels)},
		{"mixed", gzipped(t, tinyImages), tinyLabels},
	} {
		d, err := LoadIDX(writeFile(t, dir, tc.name+"-images", tc.images), writeFile(t, dir, tc.name+"-labels", tc.labels))
		if err != nil {
			t.Fatalf("case %v: %v", tc.name, err)
		}
		// Pixels p/255: 255 → 1, 51 → 0.2, 102 → 0.4.
		if got, want := d.X[:4], []float64{0, 1, 0.2, 0.4}; !slices.Equal(got, want) {
			t.Errorf("case %v: first image: got %v, want %v", tc.name, got, want)
		}
		if got, want := d.X[8:], []float64{1, 1, 0, 0}; !slices.Equal(got, want) {
			t.Errorf("case %v: last image: got %v, want %v", tc.name, got, want)
		}
		if !slices.Equal(d.Y, []int{4, 0, 2}) || d.Features != 4 || d.Classes != 5 || len(d.X) != 12 {
			t.Errorf("case %v: got labels %v, %d features, %d classes, %d values, want [4 0 2], 4, 5, 12",
				tc.name, d.Y, d.Features, d.Classes, len(d.X))
		}
	}
}

func TestLoadIDXErrors(t *testing.T) {
	good := tinyImages
	gz := gzipped(t, tinyImages)
	corrupt := slices.Clone(gz)
	corrupt[len(corrupt)-5] ^= 0xff // inside the CRC-32 trailer
	for _, tc := range []struct {
		name           string
		images, labels []byte
		want           string
	}{
		{"empty", nil, tinyLabels, "shorter than its 4-byte magic number"},
		{"bad magic", append([]byte{8, 0}, good[2:]...), tinyLabels, "magic number 08 00 08 03 does not start with two zero bytes"},
		{"float elements", idxFile(0x0d, []uint32{3, 2, 2}, make([]byte, 48)), tinyLabels, "element type 0x0d is not supported"},
		{"no dimensions", idxFile(0x08, nil, nil), tinyLabels, "no dimensions"},
		{"truncated header", good[:9], tinyLabels, "truncated header: 3 dimensions announced"},
		{"truncated data", good[:len(good)-1], tinyLabels, "truncated: dimensions [3 2 2] need 12 bytes of data, the file holds 11"},
		{"data left over", append(slices.Clone(good), 7), tinyLabels, "data continues past the 12 bytes that dimensions [3 2 2] need"},
		{"huge dimensions", idxFile(0x08, []uint32{1 << 20, 1 << 20, 1 << 20}, nil), tinyLabels, "dimensions [1048576 1048576] hold more than"},
		{"corrupt gzip", corrupt, tinyLabels, "checksum"},
		{"images of rank 1", tinyLabels, tinyLabels, "1 dimensions, want images"},
		{"labels of rank 2", good, good, "3 dimensions, want labels (1)"},
		{"count mismatch", good, idxFile(0x08, []uint32{2}, []byte{1, 2}), "holds 3 images but"},
		{"short labels", good, tinyLabels[:9], "truncated: dimensions [3] need 3 bytes of data, the file holds 1"},
	} {
		dir := t.TempDir()
		images, labels := writeFile(t, dir, "images", tc.images), writeFile(t, dir, "labels", tc.labels)
		_, err := LoadIDX(images, labels)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %v: got error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	_, err := LoadIDX(filepath.Join(t.TempDir(), "nothing"), "labels")
	if err == nil || !strings.Contains(err.Error(), "nothing") {
		t.Errorf("missing file: got error %v, want one naming it", err)
	}
}

func TestFashionMNIST(t *testing.T) {
	dir := t.TempDir()
	// As Debian installs them (gzip), and uncompressed for the test set.
	writeFile(t, dir, "train-images-idx3-ubyte.gz", gzipped(t, tinyImages))
	writeFile(t, dir, "train-labels-idx1-ubyte.gz", gzipped(t, tinyLabels))
	writeFile(t, dir, "t10k-images-idx3-ubyte", idxFile(0x08, []uint32{1, 2, 2}, []byte{0, 0, 0, 255}))
	writeFile(t, dir, "t10k-labels-idx1-ubyte", idxFile(0x08, []uint32{1}, []byte{1}))
	train, test, err := FashionMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 3 || test.Len() != 1 || train.Classes != 10 || test.Classes != 10 {
		t.Errorf("got %d train and %d test rows, %d and %d classes, want 3, 1, 10, 10", train.Len(), test.Len(), train.Classes, test.Classes)
	}
	if !slices.Equal(test.X, []float64{0, 0, 0, 1}) || !slices.Equal(test.Y, []int{1}) {
		t.Errorf("test set: got X %v Y %v, want [0 0 0 1] and [1]", test.X, test.Y)
	}

	os.Remove(filepath.Join(dir, "t10k-labels-idx1-ubyte"))
	_, _, err = FashionMNIST(dir)
	for _, want := range []string{"t10k-labels-idx1-ubyte.gz", dir, "apt-get install dataset-fashion-mnist"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing labels: got error %v, want one containing %q", err, want)
		}
	}
}

// The real test set, when Debian's dataset-fashion-mnist is installed.
func TestFashionMNISTInstalled(t *testing.T) {
	images := filepath.Join(FashionMNISTDir, "t10k-images-idx3-ubyte.gz")
	if _, err := os.Stat(images); err != nil {
		t.Skip("dataset-fashion-mnist is not installed")
	}
	d, err := LoadIDX(images, filepath.Join(FashionMNISTDir, "t10k-labels-idx1-ubyte.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 10000 || d.Features != 784 || d.Classes != 10 {
		t.Fatalf("got %d rows of %d features and %d classes, want 10000 of 784 and 10", d.Len(), d.Features, d.Classes)
	}
	counts := make([]int, 10)
	for _, y := range d.Y {
		counts[y]++
	}
	if !slices.Equal(counts, []int{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}) {
		t.Errorf("got class counts %v, want 1000 each", counts)
	}
}
