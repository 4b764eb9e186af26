//go:build gpu

package main

import "github.com/nabla-go/nabla/cuda"

// openGPU opens the first NVIDIA GPU.
func openGPU() (gpuDevice, error) { return cuda.Open(0) }
