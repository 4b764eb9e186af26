package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"gorgonia.org/tensor"
)

// FashionMNISTDir is where Debian's dataset-fashion-mnist package installs
// the Fashion-MNIST IDX files.
const FashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// IDX element types this package reads (the others are signed bytes and
// 16-bit integers).
const (
	idxUint8   = 0x08
	idxInt32   = 0x0C
	idxFloat32 = 0x0D
	idxFloat64 = 0x0E
)

// ReadIDX reads an IDX file, gzip-compressed or not (recognised from its
// content), as published for MNIST: a tensor of its shape and element type
// (unsigned bytes as uint8, 32-bit integers as int32, floats as float32 or
// float64).
func ReadIDX(path string) (*tensor.Dense, error) {
	return readFile(path, parseIDX)
}

// LoadIDX reads an IDX images file (unsigned bytes shaped N×…) and its IDX
// labels file (N unsigned bytes), as published for MNIST and
// Fashion-MNIST, into a data set of two columns: "x", the images as
// float32 pixels scaled from 0..255 to [0, 1] in the file's shape, and
// "y", the labels as int64.
func LoadIDX(imagesPath, labelsPath string) (*Tensors, error) {
	images, err := ReadIDX(imagesPath)
	if err != nil {
		return nil, err
	}
	if images.Dtype() != tensor.Uint8 || images.Dims() < 2 {
		return nil, fmt.Errorf("data: %s: %v of shape %v, want unsigned-byte images (N and at least one more dimension)", imagesPath, images.Dtype(), images.Shape())
	}
	labels, err := ReadIDX(labelsPath)
	if err != nil {
		return nil, err
	}
	if labels.Dtype() != tensor.Uint8 || labels.Dims() != 1 {
		return nil, fmt.Errorf("data: %s: %v of shape %v, want unsigned-byte labels (N)", labelsPath, labels.Dtype(), labels.Shape())
	}
	if n, m := images.Shape()[0], labels.Shape()[0]; n != m {
		return nil, fmt.Errorf("data: %s holds %d images but %s holds %d labels", imagesPath, n, labelsPath, m)
	}
	if err := checkBytes(fmt.Sprintf("%v images as float32", images.Shape()), images.Size(), 4); err != nil {
		return nil, fmt.Errorf("data: %s: %w", imagesPath, err)
	}
	x := make([]float32, images.Size())
	for i, p := range images.Uint8s() {
		x[i] = float32(p) / 255
	}
	y := make([]int64, labels.Size())
	for i, l := range labels.Uint8s() {
		y[i] = int64(l)
	}
	return NewTensors(
		Column{"x", tensor.New(tensor.WithShape(images.Shape().Clone()...), tensor.WithBacking(x))},
		Column{"y", tensor.New(tensor.WithShape(len(y)), tensor.WithBacking(y))},
	)
}

// FashionMNIST loads the Fashion-MNIST training (60,000 images) and test
// (10,000 images) sets from dir, or from FashionMNISTDir if dir is empty,
// as LoadIDX does: 28×28 images "x" and labels "y" in 0..9. Each file may
// be named as published, gzip-compressed (train-images-idx3-ubyte.gz) or
// not (train-images-idx3-ubyte). When a file is missing the error says
// how to install the data.
func FashionMNIST(dir string) (train, test *Tensors, err error) {
	if dir == "" {
		dir = FashionMNISTDir
	}
	var paths [4]string
	for i, name := range [4]string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"} {
		if paths[i], err = findIDX(dir, name); err != nil {
			return nil, nil, err
		}
	}
	if train, err = LoadIDX(paths[0], paths[1]); err != nil {
		return nil, nil, err
	}
	if test, err = LoadIDX(paths[2], paths[3]); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// FashionMNISTClasses is the number of Fashion-MNIST classes (T-shirt/top,
// trouser, pullover, dress, coat, sandal, shirt, sneaker, bag, ankle boot).
const FashionMNISTClasses = 10

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

// parseIDX reads an IDX file from r: two zero bytes, the element type, the
// number of dimensions, each dimension as a big-endian uint32, then the
// elements, big-endian.
func parseIDX(r io.Reader) (*tensor.Dense, error) {
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		return nil, fmt.Errorf("not an IDX file: shorter than its 4-byte magic number (%w)", err)
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, fmt.Errorf("not an IDX file: magic number % x does not start with two zero bytes", magic)
	}
	elem := map[byte]int{idxUint8: 1, idxInt32: 4, idxFloat32: 4, idxFloat64: 8}[magic[2]]
	if elem == 0 {
		return nil, fmt.Errorf("element type %#02x is not supported (unsigned bytes 0x08, int32 0x0c, float32 0x0d, float64 0x0e)", magic[2])
	}
	if magic[3] == 0 {
		return nil, errors.New("no dimensions")
	}
	raw := make([]byte, 4*int(magic[3]))
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("truncated header: %d dimensions announced (%w)", magic[3], err)
	}
	dims := make([]int, magic[3])
	for i := range dims {
		dims[i] = int(binary.BigEndian.Uint32(raw[4*i:]))
	}
	size, err := sizeOf(dims, elem)
	if err != nil {
		return nil, err
	}
	data, err := readExactly(r, int64(size*elem), fmt.Sprintf("shape %v", dims))
	if err != nil {
		return nil, err
	}
	var backing any
	switch magic[2] {
	case idxUint8:
		backing = data
	case idxInt32:
		backing = decode(data, 4, func(b []byte) int32 { return int32(binary.BigEndian.Uint32(b)) })
	case idxFloat32:
		backing = decode(data, 4, func(b []byte) float32 { return math.Float32frombits(binary.BigEndian.Uint32(b)) })
	case idxFloat64:
		backing = decode(data, 8, func(b []byte) float64 { return math.Float64frombits(binary.BigEndian.Uint64(b)) })
	}
	return tensor.New(tensor.WithShape(dims...), tensor.WithBacking(backing)), nil
}

// decode converts data, elements of elem bytes, with at.
func decode[T any](data []byte, elem int, at func([]byte) T) []T {
	out := make([]T, len(data)/elem)
	for i := range out {
		out[i] = at(data[i*elem:])
	}
	return out
}
