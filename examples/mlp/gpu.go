//go:build gpu

package main

import (
	"github.com/nabla-go/nabla/cuda"
)

// openGPU opens NVIDIA GPU i (CUDA's ordinal).
func openGPU(i int) (gpuDevice, error) { return cuda.Open(i) }
