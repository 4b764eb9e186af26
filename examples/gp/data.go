package main

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// bundled is the data set the command fits by default.
//
//go:embed testdata/data.csv
var bundled []byte

// The bundled data set's recipe (testdata/data.csv, written by
// `go run ./examples/gp -generate examples/gp/testdata/data.csv`).
const (
	dataPoints = 50
	dataSeed   = 1
	dataNoise  = 0.2 // the noise's standard deviation
)

// truth is the smooth function the data set samples.
func truth(x float64) float64 { return math.Sin(x) + 0.3*math.Sin(3*x) }

// Generate draws n inputs uniformly from [−5, 5], in increasing order, and
// targets truth(x) + N(0, noise²), from the seed: the same data everywhere.
func Generate(n int, seed uint64, noise float64) Data {
	rng := rand.New(rand.NewPCG(seed, seed))
	x := make([]float64, n)
	for i := range x {
		x[i] = -5 + 10*rng.Float64()
	}
	slices.Sort(x)
	y := make([]float64, n)
	for i, xi := range x {
		y[i] = truth(xi) + noise*rng.NormFloat64()
	}
	return Data{X: x, Y: y}
}

// BenchData is n points on a grid of [−5, 5] with a deterministic
// "noise" 0.1·sin(17i), a formula bench/torch/gp.py repeats exactly to
// time the same function.
func BenchData(n int) Data {
	d := Data{X: make([]float64, n), Y: make([]float64, n)}
	for i := range n {
		x := -5 + 10*float64(i)/float64(n-1)
		d.X[i], d.Y[i] = x, truth(x)+0.1*math.Sin(17*float64(i))
	}
	return d
}

// WriteCSV writes d as lines "x,y" under a header, each number in the
// shortest form that reads back exactly.
func WriteCSV(w io.Writer, d Data) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"x", "y"}); err != nil {
		return err
	}
	for i := range d.X {
		if err := cw.Write([]string{strconv.FormatFloat(d.X[i], 'g', -1, 64), strconv.FormatFloat(d.Y[i], 'g', -1, 64)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadCSV reads a data set written by WriteCSV; name is its file's, for errors.
func ReadCSV(r io.Reader, name string) (Data, error) {
	path := name
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return Data{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) < 2 || len(rows[0]) != 2 {
		return Data{}, fmt.Errorf("%s: want a header x,y and at least one row", path)
	}
	var d Data
	for i, row := range rows[1:] {
		x, errX := strconv.ParseFloat(row[0], 64)
		y, errY := strconv.ParseFloat(row[1], 64)
		if errX != nil || errY != nil {
			return Data{}, fmt.Errorf("%s: line %d: %q is not two numbers", path, i+2, row)
		}
		d.X, d.Y = append(d.X, x), append(d.Y, y)
	}
	return d, nil
}
