//go:build unix

package onnx

import (
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// readModelFile returns a model file's bytes and a function that releases
// them. A regular file is mapped read-only rather than read, so that the
// graph's copy of the weights is the only one on the heap; the mapping is
// released once the graph holds its copies (unmarshalModel and the
// import's views do not outlive importModel, and proto.Unmarshal copies
// what it keeps). Anything else (an empty file, a pipe, a failed mapping)
// is read.
func readModelFile(path string) (data []byte, release func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if size := st.Size(); st.Mode().IsRegular() && size > 0 && size <= math.MaxInt {
		if mem, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED); err == nil {
			return mem, func() { unix.Munmap(mem) }, nil
		}
	}
	data, err = os.ReadFile(path)
	return data, func() {}, err
}
