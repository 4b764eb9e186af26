package data

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"
)

func TestReadCSV(t *testing.T) {
	// labelled.csv: a header "a,label,b", then a = (k-3)/2, label k mod 3,
	// b = 2a for k = 0..5; labelled.csv.gz: the same without the header.
	var wantX []float64
	var wantY []int64
	for k := range 6 {
		a := float64(k-3) * 0.5
		wantX = append(wantX, a, 2*a)
		wantY = append(wantY, int64(k%3))
	}
	for _, tc := range []struct {
		file string
		opts CSVOptions
	}{
		{"labelled.csv", CSVOptions{Header: true, Label: 1}},
		{"labelled.csv", CSVOptions{Header: true, LabelName: "label"}},
		{"labelled.csv", CSVOptions{Header: true, Label: -2, Float32: true}},
		{"labelled.csv.gz", CSVOptions{Label: 1}},
	} {
		d, err := ReadCSV(filepath.Join("testdata", tc.file), tc.opts)
		if err != nil {
			t.Fatalf("case %v %+v: %v", tc.file, tc.opts, err)
		}
		x, y := d.Column("x"), d.Column("y")
		if !slices.Equal(x.Shape(), []int{6, 2}) || !slices.Equal(values(t, x), wantX) || !slices.Equal(y.Int64s(), wantY) {
			t.Errorf("case %v %+v: got x %v %v y %v, want %v and %v", tc.file, tc.opts, x.Shape(), values(t, x), y.Int64s(), wantX, wantY)
		}
		if want := map[bool]tensor.Dtype{false: tensor.Float64, true: tensor.Float32}[tc.opts.Float32]; x.Dtype() != want {
			t.Errorf("case %v %+v: got features of %v, want %v", tc.file, tc.opts, x.Dtype(), want)
		}
	}
	// Float labels, another separator, no label.
	d, err := parseCSV(strings.NewReader("1;0.5\n2; 1.5\n"), CSVOptions{Comma: ';', Label: -1, FloatLabels: true})
	if err != nil || !slices.Equal(d.Column("y").Float64s(), []float64{0.5, 1.5}) || !slices.Equal(d.Column("x").Float64s(), []float64{1, 2}) {
		t.Errorf("float labels: got %v, %v", d, err)
	}
	d, err = parseCSV(strings.NewReader("1,2\n3,4\n"), CSVOptions{NoLabel: true})
	if err != nil || !slices.Equal(d.Names(), []string{"x"}) || !slices.Equal(d.Column("x").Float64s(), []float64{1, 2, 3, 4}) {
		t.Errorf("no label: got %v, %v", d, err)
	}
}

func TestReadCSVErrors(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		opts          CSVOptions
		want          string
	}{
		{"short row", "1,2,3\n1,2\n", CSVOptions{}, "line 2: 2 fields, want 3 as on line 1"},
		{"not a number", "1,2\n1,x\n", CSVOptions{}, `line 2, field 2: "x" is not a number`},
		{"label not an integer", "2.5,1\n", CSVOptions{}, `line 1: label "2.5" is not an integer`},
		{"label out of range", "1,2\n", CSVOptions{Label: 2}, "label column 2 is out of range for 2 columns"},
		{"negative label out of range", "1,2\n", CSVOptions{Label: -3}, "label column -3 is out of range"},
		{"name without header", "1,2\n", CSVOptions{LabelName: "y"}, "a name needs Header"},
		{"unknown name", "a,b\n1,2\n", CSVOptions{Header: true, LabelName: "y"}, `no column is named "y"`},
		{"only a label", "1\n2\n", CSVOptions{}, "no feature columns"},
		{"bare quote", "1,2\n1,\"2\"x\n", CSVOptions{}, "line 2"},
		{"empty", "", CSVOptions{}, "no rows"},
		{"header only", "a,b\n", CSVOptions{Header: true}, "no rows"},
	} {
		path := writeFile(t, t.TempDir(), "f.csv", []byte(tc.content))
		_, err := ReadCSV(path, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("case %v: got error %v, want one naming the file and containing %q", tc.name, err, tc.want)
		}
	}
	path := writeFile(t, t.TempDir(), "f.csv.gz", gzipped(t, []byte("1,2\n"))[:10])
	if _, err := ReadCSV(path, CSVOptions{}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("truncated gzip: got error %v", err)
	}
}
