package data

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// FashionMNISTDir is where Debian's dataset-fashion-mnist package installs
// the Fashion-MNIST IDX files.
const FashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// fashionMNISTClasses is the number of Fashion-MNIST classes (T-shirt/top,
// trouser, pullover, dress, coat, sandal, shirt, sneaker, bag, ankle boot).
const fashionMNISTClasses = 10

// idxUnsignedByte is the IDX element type code of unsigned bytes, the only
// one MNIST-style files use.
const idxUnsignedByte = 0x08

// LoadIDX reads an IDX images file (unsigned bytes, shaped N×rows×cols or
// any N×…) and its IDX labels file (N unsigned bytes), as published for
// MNIST and Fashion-MNIST. Either file may be gzip-compressed: that is
// recognised from its content, not its name. Pixels are scaled from 0..255
// to [0, 1]; Features is the size of one image, Classes the largest label
// plus one.
func LoadIDX(imagesPath, labelsPath string) (Dataset, error) {
	imageDims, pixels, err := readIDX(imagesPath)
	if err != nil {
		return Dataset{}, err
	}
	if len(imageDims) < 2 {
		return Dataset{}, fmt.Errorf("data: %s: %d dimensions, want images (N and at least one more)", imagesPath, len(imageDims))
	}
	labelDims, labels, err := readIDX(labelsPath)
	if err != nil {
		return Dataset{}, err
	}
	if len(labelDims) != 1 {
		return Dataset{}, fmt.Errorf("data: %s: %d dimensions, want labels (1)", labelsPath, len(labelDims))
	}
	if labelDims[0] != imageDims[0] {
		return Dataset{}, fmt.Errorf("data: %s holds %d images but %s holds %d labels", imagesPath, imageDims[0], labelsPath, labelDims[0])
	}
	d := Dataset{
		X:        make([]float64, len(pixels)),
		Y:        make([]int, len(labels)),
		Features: product(imageDims[1:]),
	}
	for i, p := range pixels {
		d.X[i] = float64(p) / 255
	}
	for i, l := range labels {
		d.Y[i] = int(l)
		d.Classes = max(d.Classes, int(l)+1)
	}
	return d, nil
}

// FashionMNIST loads the Fashion-MNIST training (60,000 images) and test
// (10,000 images) sets from dir, or from FashionMNISTDir if dir is empty.
// Each file may be named as published, gzip-compressed
// (train-images-idx3-ubyte.gz) or not (train-images-idx3-ubyte). When a
// file is missing the error says how to install the data.
func FashionMNIST(dir string) (train, test Dataset, err error) {
	if dir == "" {
		dir = FashionMNISTDir
	}
	var paths [4]string
	for i, name := range [4]string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"} {
		if paths[i], err = findIDX(dir, name); err != nil {
			return Dataset{}, Dataset{}, err
		}
	}
	if train, err = LoadIDX(paths[0], paths[1]); err != nil {
		return Dataset{}, Dataset{}, err
	}
	if test, err = LoadIDX(paths[2], paths[3]); err != nil {
		return Dataset{}, Dataset{}, err
	}
	// Every split has all ten classes in principle; fix the count so that a
	// model sized from one fits the other.
	train.Classes, test.Classes = fashionMNISTClasses, fashionMNISTClasses
	return train, test, nil
}

// findIDX returns the path of name or name.gz in dir.
func findIDX(dir, name string) (string, error) {
	for _, candidate := range []string{name, name + ".gz"} {
		path := filepath.Join(dir, candidate)
		if _, err := os.Stat(path); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("data: Fashion-MNIST: neither %s nor %s.gz is in %s; "+
		"install the data set with `apt-get install dataset-fashion-mnist` (it puts the files in %s) or give the folder that holds them",
		name, name, dir, FashionMNISTDir)
}

// readIDX reads an IDX file of unsigned bytes, gzip-compressed or not,
// returning its dimensions and data. Memory use is bounded by the data
// actually present, whatever the header claims.
func readIDX(path string) (dims []int, data []byte, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	dims, data, err = parseIDX(f)
	if err != nil {
		return nil, nil, fmt.Errorf("data: %s: %w", path, err)
	}
	return dims, data, nil
}

// parseIDX reads an IDX file from r (see readIDX).
func parseIDX(r io.Reader) ([]int, []byte, error) {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		br = bufio.NewReader(zr)
	}
	var magic [4]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil {
		return nil, nil, fmt.Errorf("not an IDX file: shorter than its 4-byte magic number (%w)", err)
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, nil, fmt.Errorf("not an IDX file: magic number % x does not start with two zero bytes", magic)
	}
	if magic[2] != idxUnsignedByte {
		return nil, nil, fmt.Errorf("element type %#02x is not supported (unsigned bytes, %#02x)", magic[2], idxUnsignedByte)
	}
	if magic[3] == 0 {
		return nil, nil, errors.New("no dimensions")
	}
	raw := make([]byte, 4*int(magic[3]))
	if _, err := io.ReadFull(br, raw); err != nil {
		return nil, nil, fmt.Errorf("truncated header: %d dimensions announced (%w)", magic[3], err)
	}
	// A byte per element, at most 2 GiB: far above any real IDX file, and a
	// bound that keeps the size computation from overflowing.
	const maxSize = 1 << 31
	dims := make([]int, magic[3])
	size := 1
	for i := range dims {
		dims[i] = int(binary.BigEndian.Uint32(raw[4*i:]))
		if dims[i] != 0 && size > maxSize/dims[i] {
			return nil, nil, fmt.Errorf("dimensions %v hold more than %d bytes", dims[:i+1], maxSize)
		}
		size *= dims[i]
	}
	// Read one byte more than announced, to notice data left over.
	data, err := io.ReadAll(io.LimitReader(br, int64(size)+1))
	if err != nil {
		return nil, nil, err
	}
	switch {
	case len(data) < size:
		return nil, nil, fmt.Errorf("truncated: dimensions %v need %d bytes of data, the file holds %d", dims, size, len(data))
	case len(data) > size:
		return nil, nil, fmt.Errorf("data continues past the %d bytes that dimensions %v need", size, dims)
	}
	return dims, slices.Clip(data), nil
}

// product multiplies dims.
func product(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}
