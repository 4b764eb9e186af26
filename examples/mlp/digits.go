package main

import (
	"fmt"

	"github.com/nabla-go/nabla/data"
)

// The UCI handwritten digits: 8×8 images with pixels 0..16, classes 0..9.
const (
	digitsPixels   = 64
	digitsMaxPixel = 16
	digitsClasses  = 10
)

// loadDigits reads the UCI handwritten digits from a CSV file, gzip-
// compressed or not (such as testdata/digits.csv.gz): each line holds 64
// pixels in 0..16, scaled here to [0, 1], then the class label 0..9.
func loadDigits(path string) (*data.Tensors, error) {
	d, err := data.ReadCSV(path, data.CSVOptions{Label: -1})
	if err != nil {
		return nil, err
	}
	x, y := d.Column("x"), d.Column("y")
	if n := x.Shape()[1]; n != digitsPixels {
		return nil, fmt.Errorf("%s: %d pixels per line, want %d", path, n, digitsPixels)
	}
	pixels := x.Float64s()
	for i, v := range pixels {
		if !(v >= 0 && v <= digitsMaxPixel) {
			return nil, fmt.Errorf("%s: line %d: pixel %d is %v, want a number in 0..%d", path, i/digitsPixels+1, i%digitsPixels+1, v, digitsMaxPixel)
		}
		pixels[i] = v / digitsMaxPixel
	}
	for i, c := range y.Int64s() {
		if c < 0 || c >= digitsClasses {
			return nil, fmt.Errorf("%s: line %d: label is %d, want an integer in 0..%d", path, i+1, c, digitsClasses-1)
		}
	}
	return d, nil
}
