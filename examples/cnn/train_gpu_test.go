//go:build gpu

package main

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/cuda"
	"github.com/nabla-go/nabla/vm"
)

// Training on the GPU gives the CPU's accuracy, epoch by epoch, within
// the noise of float32 sums taken in another order (two test images in
// the digits' 360).
func TestTrainOnGPU(t *testing.T) {
	dev, err := cuda.Open(0)
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	defer dev.Close()
	cfg := DefaultConfig()
	cfg.Epochs = 4
	cpu, err := Train(cfg, &bytes.Buffer{})
	require.NoError(t, err)
	cfg.Device = dev
	var out bytes.Buffer
	gpu, err := Train(cfg, &out)
	require.NoError(t, err)
	require.Contains(t, out.String(), "running on "+dev.String())
	t.Logf("test accuracy by epoch: CPU %v, GPU %v", cpu.TestAccuracy, gpu.TestAccuracy)
	for i := range cpu.TestAccuracy {
		require.LessOrEqual(t, math.Abs(gpu.TestAccuracy[i]-cpu.TestAccuracy[i]), 0.006, "epoch %d", i+1)
	}
	require.Greater(t, gpu.Accuracy, 0.95)
}

// BenchmarkStepOnGPU is BenchmarkStep on the first GPU.
func BenchmarkStepOnGPU(b *testing.B) {
	dev, err := cuda.Open(0)
	if err != nil {
		b.Skipf("no GPU: %v", err)
	}
	defer dev.Close()
	benchStep(b, vm.OnDevice(dev))
}
