package data

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeGzip writes content, gzip-compressed, to a new file in a temporary
// folder and returns its path.
func writeGzip(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	if _, err := zw.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// digitsRow returns a CSV line of 64 pixels all equal to pixel, then label.
func digitsRow(pixel, label string) string {
	return strings.Repeat(pixel+",", 64) + label + "\n"
}

func TestLoadDigitsCSVShipped(t *testing.T) {
	d, err := LoadDigitsCSV("../../mlp/testdata/digits.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 1797 || d.Features != 64 || d.Classes != 10 || len(d.X) != 1797*64 {
		t.Fatalf("got %d rows (%d values) of %d features and %d classes, want 1797 of 64 and 10", d.Len(), len(d.X), d.Features, d.Classes)
	}
	// The file's first line starts 0,0,5,13,9,1 and ends with label 0;
	// the next two are digits 1 and 2.
	if got, want := d.X[:6], []float64{0, 0, 5.0 / 16, 13.0 / 16, 9.0 / 16, 1.0 / 16}; !slices.Equal(got, want) {
		t.Errorf("first row: got %v, want %v", got, want)
	}
	if got := d.Y[:3]; got[0] != 0 || got[1] != 1 || got[2] != 2 {
		t.Errorf("first labels: got %v, want [0 1 2]", got)
	}
	counts := make([]int, 10)
	for _, y := range d.Y {
		counts[y]++
	}
	for c, n := range counts {
		if n < 170 { // each digit has 174..183 examples
			t.Errorf("class %d: got %d examples, want about 180", c, n)
		}
	}
	for i, v := range d.X {
		if v < 0 || v > 1 {
			t.Fatalf("value %d: got %v, want it in [0,1]", i, v)
		}
	}
}

func TestLoadDigitsCSV(t *testing.T) {
	d, err := LoadDigitsCSV(writeGzip(t, "ok.csv.gz", digitsRow("16", "3")+digitsRow(" 4", "9")))
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 2 || d.X[0] != 1 || d.X[64] != 0.25 || d.Y[0] != 3 || d.Y[1] != 9 { // 16/16, 4/16
		t.Errorf("got %d rows, X[0] %v, X[64] %v, Y %v, want 2 rows, 1, 0.25, [3 9]", d.Len(), d.X[0], d.X[64], d.Y)
	}
}

func TestLoadDigitsCSVErrors(t *testing.T) {
	good := digitsRow("1", "1")
	for _, tc := range []struct {
		name, content, want string
	}{
		{"short row", good + "1,2,3\n", "line 2: 3 fields, want 65 (64 pixels and a label)"},
		{"long row", good + good + strings.Repeat("1,", 65) + "1\n", "line 3: 66 fields, want 65"},
		{"not a number", good + good + good + strings.Replace(good, "1,", "x,", 1), `line 4: pixel 1 is "x", want a number in 0..16`},
		{"pixel too large", strings.Replace(good, "1,", "17,", 3), `line 1: pixel 1 is "17", want a number in 0..16`},
		{"negative pixel", strings.Replace(good, "1,1,", "1,-1,", 1), `line 1: pixel 2 is "-1", want a number in 0..16`},
		{"label out of range", good + digitsRow("1", "10"), `line 2: label is "10", want an integer in 0..9`},
		{"label not an integer", digitsRow("1", "2.5"), `line 1: label is "2.5", want an integer in 0..9`},
		{"bare quote", good + `1,"2"x,3` + "\n", "line 2"},
		{"empty", "", "no rows"},
	} {
		path := writeGzip(t, "digits.csv.gz", tc.content)
		_, err := LoadDigitsCSV(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("case %v: got error %v, want one naming the file and containing %q", tc.name, err, tc.want)
		}
	}
	plain := filepath.Join(t.TempDir(), "plain.csv")
	if err := os.WriteFile(plain, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDigitsCSV(plain); err == nil || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("uncompressed file: got error %v, want one about gzip", err)
	}
	if _, err := LoadDigitsCSV(filepath.Join(t.TempDir(), "missing.csv.gz")); err == nil || !strings.Contains(err.Error(), "missing.csv.gz") {
		t.Errorf("missing file: got error %v, want one naming it", err)
	}
}
