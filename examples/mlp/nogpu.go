//go:build !gpu

package main

import "errors"

// openGPU says how to build the command with the GPU backend: without
// -tags gpu it is a static binary that loads no C library.
func openGPU(int) (gpuDevice, error) {
	return nil, errors.New("this build has no GPU backend: run it with go run -tags gpu ./examples/mlp -gpu")
}
