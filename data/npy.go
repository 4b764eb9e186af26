package data

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gorgonia.org/tensor"
)

// maxNPYHeader bounds an NPY header's length: NumPy writes a few hundred
// bytes at most.
const maxNPYHeader = 1 << 16

// ReadNPY reads a NumPy .npy file (format versions 1, 2 and 3) holding a
// little-endian float32, float64, int32, int64 or uint8 array in C order,
// as a tensor of its shape and dtype. Fortran order, big-endian data and
// other dtypes are errors.
func ReadNPY(path string) (*tensor.Dense, error) {
	return readFile(path, parseNPY)
}

// ReadNPZ reads a NumPy .npz archive (numpy.savez, compressed or not), one
// column per array, named as numpy.savez names them and in the archive's
// order: NewTensors(cols...) makes a data set of them.
func ReadNPZ(path string) ([]Column, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", path, err)
	}
	defer zr.Close()
	var cols []Column
	for _, f := range zr.File {
		t, err := readNPZMember(f)
		if err != nil {
			return nil, fmt.Errorf("data: %s: %s: %w", path, f.Name, err)
		}
		cols = append(cols, Column{Name: strings.TrimSuffix(f.Name, ".npy"), Data: t})
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("data: %s: no arrays", path)
	}
	return cols, nil
}

// readNPZMember parses one array of an NPZ archive.
func readNPZMember(f *zip.File) (*tensor.Dense, error) {
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	t, err := parseNPY(r)
	if err != nil {
		return nil, err
	}
	// Reading to the end checks the member's CRC-32.
	if _, err := r.Read(make([]byte, 1)); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return t, nil
}

// npyDtype describes a dtype ReadNPY reads.
type npyDtype struct {
	size   int
	decode func([]byte) any
}

var npyDtypes = map[string]npyDtype{
	"<f4": {4, func(b []byte) any {
		return decode(b, 4, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) })
	}},
	"<f8": {8, func(b []byte) any {
		return decode(b, 8, func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) })
	}},
	"<i4": {4, func(b []byte) any {
		return decode(b, 4, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) })
	}},
	"<i8": {8, func(b []byte) any {
		return decode(b, 8, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })
	}},
	"|u1": {1, func(b []byte) any { return b }},
}

// parseNPY reads an NPY file from r: the magic string "\x93NUMPY", the
// version, the header's length (2 bytes in version 1, 4 after), the header
// (a Python dict literal with descr, fortran_order and shape), then the
// data.
func parseNPY(r io.Reader) (*tensor.Dense, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, fmt.Errorf("not an NPY file: shorter than its 8-byte preamble (%w)", err)
	}
	if string(pre[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("not an NPY file: magic %q, want \"\\x93NUMPY\"", pre[:6])
	}
	var hlen int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("truncated preamble (%w)", err)
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("truncated preamble (%w)", err)
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
	default:
		return nil, fmt.Errorf("NPY format version %d.%d is not supported (1, 2 or 3)", pre[6], pre[7])
	}
	if hlen > maxNPYHeader {
		return nil, fmt.Errorf("header of %d bytes is longer than %d", hlen, maxNPYHeader)
	}
	header := make([]byte, hlen)
	if _, err := io.ReadFull(r, header); err != nil {
		return nil, fmt.Errorf("truncated header: %d bytes announced (%w)", hlen, err)
	}
	descr, fortran, shape, err := parseNPYHeader(string(header))
	if err != nil {
		return nil, fmt.Errorf("header %q: %w", strings.TrimSpace(string(header)), err)
	}
	if descr == "<u1" || descr == ">u1" {
		descr = "|u1"
	}
	dt, ok := npyDtypes[descr]
	if !ok {
		return nil, fmt.Errorf("dtype %q is not supported (little-endian float32 <f4, float64 <f8, int32 <i4, int64 <i8, or uint8 |u1)", descr)
	}
	if fortran {
		return nil, errors.New("Fortran order is not supported: save a C-ordered array (numpy.ascontiguousarray)")
	}
	size, err := sizeOf(shape, dt.size)
	if err != nil {
		return nil, err
	}
	data, err := readExactly(r, int64(size*dt.size), fmt.Sprintf("shape %v of %s", shape, descr))
	if err != nil {
		return nil, err
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(dt.decode(data))), nil
}

// parseNPYHeader reads the dict literal NumPy writes:
// {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }.
func parseNPYHeader(h string) (descr string, fortran bool, shape []int, err error) {
	p := &pyLiteral{s: strings.TrimSpace(h)}
	if !p.eat("{") {
		return "", false, nil, errors.New("not a dict")
	}
	seen := map[string]bool{}
	for !p.eat("}") {
		key, err := p.str()
		if err != nil {
			return "", false, nil, err
		}
		if !p.eat(":") {
			return "", false, nil, fmt.Errorf("no ':' after key %q", key)
		}
		switch key {
		case "descr":
			descr, err = p.str()
		case "fortran_order":
			fortran, err = p.boolean()
		case "shape":
			shape, err = p.tuple()
		default:
			err = fmt.Errorf("unknown key %q", key)
		}
		if err != nil {
			return "", false, nil, err
		}
		seen[key] = true
		if !p.eat(",") && !strings.HasPrefix(p.s, "}") {
			return "", false, nil, fmt.Errorf("want ',' or '}' at %q", p.s)
		}
	}
	if len(seen) != 3 {
		return "", false, nil, errors.New("want the keys descr, fortran_order and shape")
	}
	return descr, fortran, shape, nil
}

// pyLiteral reads Python literals off the front of s.
type pyLiteral struct{ s string }

// eat skips spaces and then tok, reporting whether it was there.
func (p *pyLiteral) eat(tok string) bool {
	p.s = strings.TrimLeft(p.s, " \t\n")
	if strings.HasPrefix(p.s, tok) {
		p.s = p.s[len(tok):]
		return true
	}
	return false
}

// str reads a quoted string without escapes.
func (p *pyLiteral) str() (string, error) {
	p.s = strings.TrimLeft(p.s, " \t\n")
	if p.s == "" || (p.s[0] != '\'' && p.s[0] != '"') {
		return "", fmt.Errorf("want a string at %q", p.s)
	}
	end := strings.IndexByte(p.s[1:], p.s[0])
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[1 : 1+end]
	p.s = p.s[2+end:]
	return v, nil
}

// boolean reads True or False.
func (p *pyLiteral) boolean() (bool, error) {
	switch {
	case p.eat("True"):
		return true, nil
	case p.eat("False"):
		return false, nil
	}
	return false, fmt.Errorf("want True or False at %q", p.s)
}

// tuple reads a tuple of non-negative integers: (), (3,), (2, 3).
func (p *pyLiteral) tuple() ([]int, error) {
	if !p.eat("(") {
		return nil, fmt.Errorf("want a tuple at %q", p.s)
	}
	shape := []int{}
	for !p.eat(")") {
		p.s = strings.TrimLeft(p.s, " \t\n")
		n := 0
		for n < len(p.s) && p.s[n] >= '0' && p.s[n] <= '9' {
			n++
		}
		d, err := strconv.Atoi(p.s[:n])
		if err != nil || d > math.MaxUint32 {
			return nil, fmt.Errorf("want a dimension at %q", p.s)
		}
		shape = append(shape, d)
		p.s = strings.TrimPrefix(p.s[n:], "L") // Python 2's long integers
		if !p.eat(",") && !strings.HasPrefix(strings.TrimLeft(p.s, " \t\n"), ")") {
			return nil, fmt.Errorf("want ',' or ')' at %q", p.s)
		}
	}
	return shape, nil
}
