//go:build mpi

package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/dist"
	"github.com/nabla-go/nabla/internal/testkit/mpitest"
)

// distConfigs are the runs compared: without dropout, where two processes
// must compute what one does up to the summation order; and the default
// model with dropout, whose masks differ between the processes' draws and
// one process's.
var distConfigs = []struct {
	name    string
	epochs  int
	dropout float64
	hidden  []int
	tol     float64 // on the test accuracy
}{
	{"no dropout", 3, 0, []int{32}, 0},
	{"default", 10, DefaultConfig().Dropout, DefaultConfig().Hidden, 0.02},
}

func distConfig(i int) Config {
	cfg := DefaultConfig()
	cfg.Epochs, cfg.Dropout, cfg.Hidden = distConfigs[i].epochs, distConfigs[i].dropout, distConfigs[i].hidden
	return cfg
}

// TestChildDist trains each configuration on the processes of the launch
// and prints, on rank 0, the test accuracy and loss.
func TestChildDist(t *testing.T) {
	if !mpitest.IsChild() {
		t.Skip("runs under mpirun, started by TestDistMatchesOneProcess")
	}
	c, err := dist.Init(dist.WithTimeout(time.Minute))
	require.NoError(t, err)
	for i := range distConfigs {
		cfg := distConfig(i)
		cfg.Cluster = comm{c}
		res, err := Train(cfg, io.Discard)
		require.NoError(t, err)
		if c.Rank() == 0 {
			fmt.Printf("RESULT %d %.17g %.17g\n", i, res.Accuracy, res.TestLoss[len(res.TestLoss)-1])
		}
	}
	require.NoError(t, c.Close())
}

// TestDistMatchesOneProcess: mpirun -np 2 of the -dist build reaches the
// test accuracy of one process with the same global batch (32): the same
// to the rounding without dropout, within 0.02 with it.
func TestDistMatchesOneProcess(t *testing.T) {
	if mpitest.IsChild() {
		t.Skip("a child run")
	}
	l := mpitest.OpenMPI(t)
	out, err, took := l.Run(2, "^TestChildDist$", 3*time.Minute)
	require.NoError(t, err, out)
	t.Logf("2 processes: %v", took.Round(time.Millisecond))
	single, err := dist.Init() // rank 0 of 1: this process was not launched by mpirun
	require.NoError(t, err)
	for i, dc := range distConfigs {
		var acc, loss float64
		found := false
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) == 4 && f[0] == "RESULT" && f[1] == strconv.Itoa(i) {
				acc, _ = strconv.ParseFloat(f[2], 64)
				loss, _ = strconv.ParseFloat(f[3], 64)
				found = true
			}
		}
		require.True(t, found, "%s: no result from rank 0:\n%s", dc.name, out)
		cfg := distConfig(i)
		cfg.Cluster = comm{single}
		res, err := Train(cfg, io.Discard)
		require.NoError(t, err)
		t.Logf("%s: test accuracy %.4f on 2 processes, %.4f on one; test loss %.6f and %.6f",
			dc.name, acc, res.Accuracy, loss, res.TestLoss[len(res.TestLoss)-1])
		require.LessOrEqual(t, math.Abs(acc-res.Accuracy), dc.tol, dc.name)
		if dc.tol == 0 {
			require.InEpsilon(t, res.TestLoss[len(res.TestLoss)-1], loss, 1e-9, dc.name)
		}
	}
}
