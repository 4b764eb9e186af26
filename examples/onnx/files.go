package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/data"
	"github.com/nabla-go/nabla/graph"
)

// testFrom is the first row of the digits kept for testing: rows before it
// train (testdata/export_cnn.py pre-trained on the first 700 of them).
const testFrom = 1400

// find returns the first of the paths, relative to the repository (go run),
// to this folder (go test) or to this file, that exists; else the first.
func find(rel ...string) string {
	candidates := []string{filepath.Join(rel...), filepath.Join(append([]string{"..", ".."}, rel...)...)}
	if _, file, _, ok := runtime.Caller(0); ok {
		candidates = append(candidates, filepath.Join(append([]string{filepath.Dir(file), "..", ".."}, rel...)...))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return candidates[0]
}

// loadDigits reads the digits as images (N, 1, 8, 8) of pixels 0..16 and
// labels, split at testFrom.
func loadDigits(path string) (train, test *data.Tensors, err error) {
	if path == "" {
		path = find("examples", "mlp", "testdata", "digits.csv.gz")
	}
	d, err := data.ReadCSV(path, data.CSVOptions{Label: -1})
	if err != nil {
		return nil, nil, fmt.Errorf("onnx example: %w (give the file with -digits)", err)
	}
	if err := d.Reshape("x", 1, 8, 8); err != nil {
		return nil, nil, fmt.Errorf("onnx example: %s: %w", path, err)
	}
	if d.Len() <= testFrom {
		return nil, nil, fmt.Errorf("onnx example: %s has %d rows, want more than %d", path, d.Len(), testFrom)
	}
	if train, err = rows(d, 0, testFrom); err == nil {
		test, err = rows(d, testFrom, d.Len())
	}
	return train, test, err
}

// rows copies rows [from, to) of every column of d.
func rows(d *data.Tensors, from, to int) (*data.Tensors, error) {
	var cols []data.Column
	for _, name := range d.Names() {
		c := d.Column(name)
		shape := append([]int{to - from}, c.Shape()[1:]...)
		per := graph.ShapeSize(c.Shape()[1:])
		var t *tensor.Dense
		var err error
		if graph.IsInteger(c.Dtype()) {
			t, err = graph.FromInt64s(c.Dtype(), c.Int64s()[from*per:to*per], shape...)
		} else {
			t, err = graph.FromFloat64s(c.Dtype(), graph.Float64s(c)[from*per:to*per], shape...)
		}
		if err != nil {
			return nil, err
		}
		cols = append(cols, data.Column{Name: name, Data: t})
	}
	return data.NewTensors(cols...)
}
