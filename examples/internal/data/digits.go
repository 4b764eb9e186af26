package data

import (
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// The UCI handwritten digits: 8×8 images with pixels 0..16, classes 0..9.
const (
	digitsPixels   = 64
	digitsMaxPixel = 16
	digitsClasses  = 10
)

// LoadDigitsCSV reads the UCI handwritten digits from a gzip-compressed CSV
// file (such as examples/mlp/testdata/digits.csv.gz): each line holds 64
// pixels in 0..16, scaled here to [0, 1], then the class label 0..9.
// A malformed line gives an error naming the file and the line.
func LoadDigitsCSV(path string) (Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return Dataset{}, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return Dataset{}, fmt.Errorf("data: %s: %w", path, err)
	}
	d, err := parseDigits(zr)
	if err != nil {
		return Dataset{}, fmt.Errorf("data: %s: %w", path, err)
	}
	return d, nil
}

// parseDigits reads the digits CSV from r.
func parseDigits(r io.Reader) (Dataset, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // counted below, to say which line is short
	cr.ReuseRecord = true
	d := Dataset{Features: digitsPixels, Classes: digitsClasses}
	for {
		record, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Dataset{}, err // a csv.ParseError names the line
		}
		line, _ := cr.FieldPos(0)
		if len(record) != digitsPixels+1 {
			return Dataset{}, fmt.Errorf("line %d: %d fields, want %d (%d pixels and a label)",
				line, len(record), digitsPixels+1, digitsPixels)
		}
		for j, field := range record[:digitsPixels] {
			v, err := strconv.ParseFloat(strings.TrimSpace(field), 64)
			if err != nil || v < 0 || v > digitsMaxPixel {
				return Dataset{}, fmt.Errorf("line %d: pixel %d is %q, want a number in 0..%d", line, j+1, field, digitsMaxPixel)
			}
			d.X = append(d.X, v/digitsMaxPixel)
		}
		label := record[digitsPixels]
		c, err := strconv.Atoi(strings.TrimSpace(label))
		if err != nil || c < 0 || c >= digitsClasses {
			return Dataset{}, fmt.Errorf("line %d: label is %q, want an integer in 0..%d", line, label, digitsClasses-1)
		}
		d.Y = append(d.Y, c)
	}
	if d.Len() == 0 {
		return Dataset{}, errors.New("no rows")
	}
	return d, nil
}
