//go:build !unix

package onnx

import "os"

// readModelFile reads a model file; systems without mmap hold its bytes
// on the heap besides the graph's copy of the weights.
func readModelFile(path string) (data []byte, release func(), err error) {
	data, err = os.ReadFile(path)
	return data, func() {}, err
}
