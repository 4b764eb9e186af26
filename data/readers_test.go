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

	"github.com/nabla-go/nabla/graph"
	"gorgonia.org/tensor"
)

// want returns the values make_fixtures.py writes for n elements of a
// dtype: (i-3)/2 for floats, (i-3)·7 for signed integers, 11i mod 256 for
// uint8, as float64s.
func want(n int, dt tensor.Dtype) []float64 {
	out := make([]float64, n)
	for i := range out {
		switch dt {
		case tensor.Float32, tensor.Float64:
			out[i] = float64(i-3) * 0.5
		case tensor.Uint8:
			out[i] = float64(i * 11 % 256)
		default:
			out[i] = float64((i - 3) * 7)
		}
	}
	return out
}

// values returns t's elements as float64s.
func values(t *testing.T, d *tensor.Dense) []float64 {
	t.Helper()
	b, err := backingOf(d)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, d.Size())
	if err := convert(out, b, 0, len(out), true); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReadNPY(t *testing.T) {
	checkReads(t, ReadNPY, []readCase{
		{"f32.npy", tensor.Float32, []int{3, 4}},
		{"f64.npy", tensor.Float64, []int{2, 3}},
		{"i32.npy", tensor.Int32, []int{5}},
		{"i64.npy", tensor.Int64, []int{4, 1}},
		{"u8.npy", tensor.Uint8, []int{2, 2, 3}},
		{"f64_v2.npy", tensor.Float64, []int{2, 3}},
		{"f64_v3.npy", tensor.Float64, []int{2, 3}},
		{"empty.npy", tensor.Float32, []int{0, 3}},
	})
	d, err := ReadNPY(filepath.Join("testdata", "scalar.npy"))
	if err != nil || !d.IsScalar() || d.Data().(float64) != 2.5 {
		t.Errorf("scalar: got %v, %v, want 2.5", d, err)
	}
}

// npy returns an NPY version 1 file with the given header and data.
func npy(header string, data []byte) []byte {
	out := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), byte(len(header)>>8))
	return append(append(out, header...), data...)
}

func TestReadNPYErrors(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "f64.npy"))
	if err != nil {
		t.Fatal(err)
	}
	v2 := []byte("\x93NUMPY\x02\x00\xff\xff\xff\x7f{")
	for _, tc := range []struct {
		name    string
		content []byte
		want    string
	}{
		{"fortran", nil, "Fortran order is not supported"},
		{"big_endian", nil, `dtype ">f8" is not supported`},
		{"f16", nil, `dtype "<f2" is not supported`},
		{"bool", nil, `dtype "|b1" is not supported`},
		{"empty file", []byte{}, "shorter than its 8-byte preamble"},
		{"bad magic", append([]byte("\x93NUMPZ"), good[6:]...), "not an NPY file"},
		{"version 4", append([]byte("\x93NUMPY\x04\x00"), good[8:]...), "version 4.0 is not supported"},
		{"short preamble", good[:9], "truncated preamble"},
		{"long header", v2, "header of 2147483647 bytes is longer than 65536"},
		{"truncated header", good[:50], "truncated header: 118 bytes announced"},
		{"truncated data", good[:len(good)-1], "truncated: shape [2 3] of <f8 needs 48 bytes, the file holds 47"},
		{"data left over", append(slices.Clone(good), 0), "data continues past the 48 bytes"},
		{"huge shape", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967295, 4294967295, 4294967295), }", nil), "shape [4294967295 4294967295 4294967295] of 8-byte elements needs more bytes than an int64 counts, over the memory limit"},
		{"shape lie", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (10000, 1000), }", make([]byte, 16)), "needs 80000000 bytes, the file holds 16"},
		{"negative", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }", nil), "want a dimension"},
		{"not a dict", npy("['descr']", nil), "not a dict"},
		{"missing key", npy("{'descr': '<f8', 'shape': (1,), }", nil), "want the keys"},
		{"unknown key", npy("{'descr': '<f8', 'x': 1}", nil), `unknown key "x"`},
		{"bad bool", npy("{'fortran_order': 0}", nil), "want True or False"},
		{"unterminated", npy("{'descr", nil), "unterminated string"},
		{"no colon", npy("{'descr' '<f8'}", nil), `no ':' after key "descr"`},
		{"no comma", npy("{'descr': '<f8' 'shape': (1,)}", nil), "want ',' or '}'"},
		{"bad tuple", npy("{'shape': (1 2)}", nil), "want ',' or ')'"},
		{"not a tuple", npy("{'shape': [1]}", nil), "want a tuple"},
	} {
		path := filepath.Join("testdata", tc.name+".npy")
		if tc.content != nil {
			path = filepath.Join(t.TempDir(), tc.name+".npy")
			if err := os.WriteFile(path, tc.content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := ReadNPY(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("case %v: got error %v, want one naming the file and containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := ReadNPY(filepath.Join(t.TempDir(), "missing.npy")); err == nil || !strings.Contains(err.Error(), "missing.npy") {
		t.Errorf("missing file: got error %v", err)
	}
}

func TestReadNPZ(t *testing.T) {
	for _, file := range []string{"xy.npz", "xy_compressed.npz"} {
		cols, err := ReadNPZ(filepath.Join("testdata", file))
		if err != nil {
			t.Fatalf("case %v: %v", file, err)
		}
		d, err := NewTensors(cols...)
		if err != nil {
			t.Fatalf("case %v: %v", file, err)
		}
		x, y := d.Column("x"), d.Column("y")
		if d.Len() != 5 || x == nil || y == nil || !slices.Equal(x.Shape(), []int{5, 2, 2}) || y.Dtype() != tensor.Int64 {
			t.Fatalf("case %v: got columns %v, %d rows", file, d.Names(), d.Len())
		}
		if !slices.Equal(values(t, x), want(20, tensor.Float32)) || !slices.Equal(values(t, y), want(5, tensor.Int64)) {
			t.Errorf("case %v: got x %v y %v", file, values(t, x), values(t, y))
		}
	}
	good, err := os.ReadFile(filepath.Join("testdata", "xy_compressed.npz"))
	if err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(good)
	bad[60] ^= 0xff // inside x.npy's compressed data
	for _, tc := range []struct {
		name    string
		content []byte
		want    string
	}{
		{"not a zip", []byte("hello"), "not a valid zip file"},
		{"truncated", good[:len(good)/2], "not a valid zip file"},
		{"corrupt member", bad, "x.npy"},
	} {
		path := filepath.Join(t.TempDir(), "a.npz")
		if err := os.WriteFile(path, tc.content, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadNPZ(path); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("case %v: got error %v, want one naming the file and containing %q", tc.name, err, tc.want)
		}
	}
}

func TestReadIDX(t *testing.T) {
	checkReads(t, ReadIDX, []readCase{
		{"images-idx3-ubyte", tensor.Uint8, []int{3, 2, 2}},
		{"f32-idx2.gz", tensor.Float32, []int{2, 3}},
		{"f64-idx1", tensor.Float64, []int{4}},
		{"i32-idx2", tensor.Int32, []int{3, 2}},
	})
}

// readCase is a test file and the dtype and shape read must give it.
type readCase struct {
	file  string
	dtype tensor.Dtype
	shape []int
}

// checkReads reads each case's file under testdata with read and checks
// its dtype, shape and values (want's).
func checkReads(t *testing.T, read func(string) (*tensor.Dense, error), cases []readCase) {
	t.Helper()
	for _, tc := range cases {
		d, err := read(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Errorf("case %v: %v", tc.file, err)
			continue
		}
		if d.Dtype() != tc.dtype || !slices.Equal(d.Shape(), tc.shape) {
			t.Errorf("case %v: got %v %v, want %v %v", tc.file, d.Dtype(), d.Shape(), tc.dtype, tc.shape)
		}
		if got, w := values(t, d), want(product(tc.shape), tc.dtype); !slices.Equal(got, w) {
			t.Errorf("case %v: got %v, want %v", tc.file, got, w)
		}
	}
}

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
		x, y := d.Column("x"), d.Column("y")
		// Pixels p/255: 255 → 1, 51 → 0.2, 102 → 0.4.
		if got, want := x.Float32s(), []float32{0, 1, 51.0 / 255, 102.0 / 255, 1.0 / 255, 2.0 / 255, 3.0 / 255, 4.0 / 255, 1, 1, 0, 0}; !slices.Equal(got, want) {
			t.Errorf("case %v: images: got %v, want %v", tc.name, got, want)
		}
		if !slices.Equal(y.Int64s(), []int64{4, 0, 2}) || !slices.Equal(x.Shape(), []int{3, 2, 2}) {
			t.Errorf("case %v: got labels %v, images shaped %v", tc.name, y.Int64s(), x.Shape())
		}
	}
	// The fixtures written by make_fixtures.py.
	d, err := LoadIDX(filepath.Join("testdata", "images-idx3-ubyte"), filepath.Join("testdata", "labels-idx1-ubyte.gz"))
	if err != nil || d.Len() != 3 || !slices.Equal(d.Column("y").Int64s(), []int64{4, 0, 2}) {
		t.Errorf("fixtures: got %v, %v", d, err)
	}
}

// The readers check what a header claims against graph.MemoryLimit
// before reading the data: f64.npy and f64s hold 6 float64 (48 bytes),
// the tiny images 12 bytes that become 48 bytes of float32.
func TestReadersMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	images, labels := writeFile(t, dir, "images", tinyImages), writeFile(t, dir, "labels", tinyLabels)
	f64s := writeFile(t, dir, "f64s", idxFile(0x0e, []uint32{6}, make([]byte, 48)))
	npyPath := filepath.Join("testdata", "f64.npy")
	defer graph.SetMemoryLimit(graph.SetMemoryLimit(47))
	for _, tc := range []struct {
		name string
		read func() error
		want string
	}{
		{"npy", func() error { _, err := ReadNPY(npyPath); return err }, "f64.npy: shape [2 3] of 8-byte elements needs 48 bytes, over the memory limit of 47 bytes (graph.SetMemoryLimit)"},
		{"idx", func() error { _, err := ReadIDX(f64s); return err }, "f64s: shape [6] of 8-byte elements needs 48 bytes, over the memory limit of 47 bytes"},
		{"idx images", func() error { _, err := LoadIDX(images, labels); return err }, "images: (3, 2, 2) images as float32 needs 48 bytes, over the memory limit of 47 bytes"},
	} {
		if err := tc.read(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %v: got error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	graph.SetMemoryLimit(48)
	if _, err := ReadNPY(npyPath); err != nil {
		t.Errorf("npy at 48 bytes: %v", err)
	}
	if _, err := ReadIDX(f64s); err != nil {
		t.Errorf("idx at 48 bytes: %v", err)
	}
	if _, err := LoadIDX(images, labels); err != nil {
		t.Errorf("idx images at 48 bytes: %v", err)
	}
}

func TestLoadIDXErrors(t *testing.T) {
	good := tinyImages
	gz := gzipped(t, tinyImages)
	corrupt := slices.Clone(gz)
	corrupt[len(corrupt)-5] ^= 0xff // inside the CRC-32 trailer
	badHeader := slices.Clone(gz)
	badHeader[2] = 99 // gzip's compression method
	for _, tc := range []struct {
		name           string
		images, labels []byte
		want           string
	}{
		{"empty", []byte{}, tinyLabels, "shorter than its 4-byte magic number"},
		{"bad magic", append([]byte{8, 0}, good[2:]...), tinyLabels, "magic number 08 00 08 03 does not start with two zero bytes"},
		{"int16 elements", idxFile(0x0b, []uint32{3, 2, 2}, make([]byte, 24)), tinyLabels, "element type 0x0b is not supported"},
		{"float images", idxFile(0x0d, []uint32{1, 1}, make([]byte, 4)), tinyLabels, "float32 of shape (1, 1), want unsigned-byte images"},
		{"no dimensions", idxFile(0x08, nil, nil), tinyLabels, "no dimensions"},
		{"truncated header", good[:9], tinyLabels, "truncated header: 3 dimensions announced"},
		{"truncated data", good[:len(good)-1], tinyLabels, "truncated: shape [3 2 2] needs 12 bytes, the file holds 11"},
		{"data left over", append(slices.Clone(good), 7), tinyLabels, "data continues past the 12 bytes that shape [3 2 2] needs"},
		{"huge dimensions", idxFile(0x08, []uint32{1 << 20, 1 << 20, 1 << 20}, nil), tinyLabels, "shape [1048576 1048576 1048576] of 1-byte elements needs 1152921504606846976 bytes (1 EiB), over the memory limit"},
		{"size lie", idxFile(0x0e, []uint32{1 << 20, 16}, make([]byte, 8)), tinyLabels, "needs 134217728 bytes, the file holds 8"},
		{"corrupt gzip", corrupt, tinyLabels, "checksum"},
		{"bad gzip header", badHeader, tinyLabels, "gzip"},
		{"images of rank 1", tinyLabels, tinyLabels, "want unsigned-byte images"},
		{"labels of rank 2", good, good, "want unsigned-byte labels"},
		{"count mismatch", good, idxFile(0x08, []uint32{2}, []byte{1, 2}), "holds 3 images but"},
		{"short labels", good, tinyLabels[:9], "truncated: shape [3] needs 3 bytes, the file holds 1"},
	} {
		dir := t.TempDir()
		images, labels := writeFile(t, dir, "images", tc.images), writeFile(t, dir, "labels", tc.labels)
		_, err := LoadIDX(images, labels)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
			t.Errorf("case %v: got error %v, want one naming the file and containing %q", tc.name, err, tc.want)
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
	if train.Len() != 3 || test.Len() != 1 {
		t.Errorf("got %d train and %d test rows, want 3 and 1", train.Len(), test.Len())
	}
	if !slices.Equal(test.Column("x").Float32s(), []float32{0, 0, 0, 1}) || !slices.Equal(test.Column("y").Int64s(), []int64{1}) {
		t.Errorf("test set: got x %v y %v, want [0 0 0 1] and [1]", test.Column("x").Float32s(), test.Column("y").Int64s())
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
	if d.Len() != 10000 || !slices.Equal(d.Column("x").Shape(), []int{10000, 28, 28}) {
		t.Fatalf("got %d rows, images shaped %v, want 10000 of 28×28", d.Len(), d.Column("x").Shape())
	}
	counts := make([]int, FashionMNISTClasses)
	for _, y := range d.Column("y").Int64s() {
		counts[y]++
	}
	if !slices.Equal(counts, []int{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}) {
		t.Errorf("got class counts %v, want 1000 each", counts)
	}
}
