package data

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"gorgonia.org/tensor"
)

// CSVOptions says how ReadCSV reads a file.
type CSVOptions struct {
	// Header says the first line names the columns.
	Header bool
	// Label is the index of the label column, counting from 0; a negative
	// index counts from the end (-1 is the last column).
	Label int
	// LabelName picks the label column by its name in the header instead.
	LabelName string
	// NoLabel reads every column as a feature.
	NoLabel bool
	// FloatLabels keeps labels as float64 (regression targets); otherwise
	// they must be integers and are kept as int64 (classes).
	FloatLabels bool
	// Comma separates fields; 0 means ','.
	Comma rune
	// Float32 keeps the features as float32 rather than float64.
	Float32 bool
}

// ReadCSV reads a CSV file of numbers, gzip-compressed or not (recognised
// from its content), into a data set of two columns: "x", the features
// (every column but the label, in order) as an N×F float64 (or float32)
// tensor, and "y", the labels as N int64 (or float64) values. With
// NoLabel there is only "x". Every line must have the same number of
// fields; errors name the file, the line and the field.
func ReadCSV(path string, opts CSVOptions) (*Tensors, error) {
	return readFile(path, func(r io.Reader) (*Tensors, error) { return parseCSV(r, opts) })
}

// parseCSV reads CSV text from r (see ReadCSV).
func parseCSV(r io.Reader, opts CSVOptions) (*Tensors, error) {
	cr := csv.NewReader(r)
	if opts.Comma != 0 {
		cr.Comma = opts.Comma
	}
	cr.FieldsPerRecord = -1 // counted below, to say which line is wrong
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	var (
		x      []float64
		ints   []int64
		floats []float64
		width  = -1
		label  = -1
		rows   int
	)
	for {
		record, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err // a csv.ParseError names the line
		}
		line, _ := cr.FieldPos(0)
		if width < 0 {
			width = len(record)
			if label, err = labelColumn(record, opts); err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			if opts.Header {
				continue
			}
		}
		if len(record) != width {
			return nil, fmt.Errorf("line %d: %d fields, want %d as on line 1", line, len(record), width)
		}
		for j, field := range record {
			field = strings.TrimSpace(field)
			if j == label && !opts.FloatLabels {
				v, err := strconv.ParseInt(field, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("line %d: label %q is not an integer (set FloatLabels for real-valued targets)", line, field)
				}
				ints = append(ints, v)
				continue
			}
			v, err := strconv.ParseFloat(field, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d, field %d: %q is not a number", line, j+1, field)
			}
			if j == label {
				floats = append(floats, v)
			} else {
				x = append(x, v)
			}
		}
		rows++
	}
	if rows == 0 {
		return nil, errors.New("no rows")
	}
	features := width
	if label >= 0 {
		features--
	}
	if features == 0 {
		return nil, errors.New("no feature columns")
	}
	cols := []Column{{"x", floatTensor(x, opts.Float32, rows, features)}}
	switch {
	case label < 0:
	case opts.FloatLabels:
		cols = append(cols, Column{"y", tensor.New(tensor.WithShape(rows), tensor.WithBacking(floats))})
	default:
		cols = append(cols, Column{"y", tensor.New(tensor.WithShape(rows), tensor.WithBacking(ints))})
	}
	return NewTensors(cols...)
}

// labelColumn returns the index of the label column in a first record,
// or -1 for none.
func labelColumn(first []string, opts CSVOptions) (int, error) {
	switch {
	case opts.NoLabel:
		return -1, nil
	case opts.LabelName != "":
		if !opts.Header {
			return 0, fmt.Errorf("label column %q: a name needs Header", opts.LabelName)
		}
		i := slices.IndexFunc(first, func(f string) bool { return strings.TrimSpace(f) == opts.LabelName })
		if i < 0 {
			return 0, fmt.Errorf("no column is named %q in the header %q", opts.LabelName, first)
		}
		return i, nil
	}
	i := opts.Label
	if i < 0 {
		i += len(first)
	}
	if i < 0 || i >= len(first) {
		return 0, fmt.Errorf("label column %d is out of range for %d columns", opts.Label, len(first))
	}
	return i, nil
}

// floatTensor shapes x as rows×features, as float32 if asked.
func floatTensor(x []float64, as32 bool, rows, features int) *tensor.Dense {
	if !as32 {
		return tensor.New(tensor.WithShape(rows, features), tensor.WithBacking(x))
	}
	x32 := make([]float32, len(x))
	for i, v := range x {
		x32[i] = float32(v)
	}
	return tensor.New(tensor.WithShape(rows, features), tensor.WithBacking(x32))
}
