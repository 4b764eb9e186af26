//go:build gpu

package main

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/cuda"
)

// Training on a device (the GPU where there is one, else the host
// stand-in that runs the GPU's kernels on the CPU) gives the CPU's run:
// the same losses, epoch by epoch, to 1e-9, and the same accuracy.
func TestTrainOnDevice(t *testing.T) {
	dev, err := cuda.OpenOrHost()
	if err != nil {
		t.Skipf("no GPU and no host stand-in: %v", err)
	}
	t.Logf("on %v", dev)
	defer dev.Close()
	cfg := DefaultConfig()
	cfg.Epochs = 3
	cfg.Hidden = []int{48}
	cpu, err := Train(cfg, &bytes.Buffer{})
	require.NoError(t, err)
	cfg.Device = dev
	var out bytes.Buffer
	gpu, err := Train(cfg, &out)
	require.NoError(t, err)
	require.Contains(t, out.String(), "running on "+dev.String())
	for i := range cpu.TrainLoss {
		for _, pair := range [][2]float64{{gpu.TrainLoss[i], cpu.TrainLoss[i]}, {gpu.TestLoss[i], cpu.TestLoss[i]}} {
			require.LessOrEqual(t, math.Abs(pair[0]-pair[1]), 1e-9*pair[1], "epoch %d: device %v, CPU %v", i, pair[0], pair[1])
		}
	}
	require.Equal(t, cpu.TestAccuracy, gpu.TestAccuracy)
	require.Greater(t, gpu.Accuracy, 0.8)
}
