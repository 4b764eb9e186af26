package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadDigitsShipped(t *testing.T) {
	d, err := loadDigits(filepath.Join("testdata", "digits.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	x, y := d.Column("x").Float64s(), d.Column("y").Int64s()
	if d.Len() != 1797 || len(x) != 1797*64 {
		t.Fatalf("got %d rows (%d values), want 1797 of 64", d.Len(), len(x))
	}
	// The file's first line starts 0,0,5,13,9,1 and ends with label 0;
	// the next two are digits 1 and 2.
	if got, want := x[:6], []float64{0, 0, 5.0 / 16, 13.0 / 16, 9.0 / 16, 1.0 / 16}; !slices.Equal(got, want) {
		t.Errorf("first row: got %v, want %v", got, want)
	}
	if !slices.Equal(y[:3], []int64{0, 1, 2}) {
		t.Errorf("first labels: got %v, want [0 1 2]", y[:3])
	}
	counts := make([]int, 10)
	for _, c := range y {
		counts[c]++
	}
	for c, n := range counts {
		if n < 170 { // each digit has 174..183 examples
			t.Errorf("class %d: got %d examples, want about 180", c, n)
		}
	}
}

// digitsRow returns a CSV line of 64 pixels all equal to pixel, then label.
func digitsRow(pixel, label string) string {
	return strings.Repeat(pixel+",", 64) + label + "\n"
}

func TestLoadDigitsErrors(t *testing.T) {
	good := digitsRow("1", "1")
	for _, tc := range []struct {
		name, content, want string
	}{
		{"short row", good + "1,2,3\n", "line 2: 3 fields, want 65"},
		{"few pixels", "1,2,3\n", "2 pixels per line, want 64"},
		{"pixel too large", good + strings.Replace(good, "1,", "17,", 3), "line 2: pixel 1 is 17, want a number in 0..16"},
		{"negative pixel", strings.Replace(good, "1,1,", "1,-1,", 1), "line 1: pixel 2 is -1"},
		{"label out of range", good + digitsRow("1", "10"), "line 2: label is 10, want an integer in 0..9"},
		{"label not an integer", digitsRow("1", "2.5"), `label "2.5" is not an integer`},
	} {
		path := filepath.Join(t.TempDir(), "digits.csv")
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := loadDigits(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("case %v: got error %v, want one naming the file and containing %q", tc.name, err, tc.want)
		}
	}
}
