package main

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// shortRun trains for two epochs with the given seed and writes the
// samples' grid to dir.
func shortRun(t *testing.T, seed uint64, dir string) (Result, string) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Epochs, cfg.Seed = 2, seed
	cfg.Samples = filepath.Join(dir, "samples.png")
	var out bytes.Buffer
	res, err := Train(cfg, &out)
	require.NoError(t, err)
	return res, out.String()
}

// Two epochs raise the ELBO on the training batches and on the held-out
// digits; the held-out ELBO is printed, and the samples' grid is a PNG of
// 8×8 digits.
func TestELBOImproves(t *testing.T) {
	dir := t.TempDir()
	res, out := shortRun(t, 1, dir)
	require.Len(t, res.TestELBO, 2)
	require.Greater(t, res.TrainELBO[1], res.TrainELBO[0], "training ELBO rises: %v", res.TrainELBO)
	require.Greater(t, res.TestELBO[1], res.TestELBO[0], "held-out ELBO rises: %v", res.TestELBO)
	for _, e := range append(res.TrainELBO, res.TestELBO...) {
		// An ELBO is a lower bound on a log-likelihood: finite and, for 64
		// pixels in [0, 1] under Bernoulli terms, negative.
		require.True(t, e < 0 && !math.IsInf(e, 0), "ELBO %v", e)
	}
	require.Regexp(t, regexp.MustCompile(`(?m)^epoch 2/2: train ELBO -\d+\.\d{4}, held-out ELBO -\d+\.\d{4} nats per digit$`), out)
	require.Regexp(t, regexp.MustCompile(`\nheld-out ELBO: -\d+\.\d{4} nats per digit\n$`), out)
	f, err := os.Open(filepath.Join(dir, "samples.png"))
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.Equal(t, 8*(8*gridScale+1)+1, img.Bounds().Dx())
	require.Len(t, res.Samples, 64*64)
}

// Two runs with one seed give the same ELBOs and samples bit for bit, and
// the same PNG; another seed gives others.
func TestSeededRunsRepeat(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	a, _ := shortRun(t, 5, dirs[0])
	b, _ := shortRun(t, 5, dirs[1])
	c, _ := shortRun(t, 6, dirs[2])
	bits := func(r Result) []uint64 {
		var out []uint64
		for _, v := range slices.Concat(r.TrainELBO, r.TestELBO, r.Samples) {
			out = append(out, math.Float64bits(v))
		}
		return out
	}
	require.Equal(t, bits(a), bits(b))
	require.NotEqual(t, bits(a), bits(c))
	pa, err := os.ReadFile(filepath.Join(dirs[0], "samples.png"))
	require.NoError(t, err)
	pb, err := os.ReadFile(filepath.Join(dirs[1], "samples.png"))
	require.NoError(t, err)
	require.Equal(t, pa, pb)
}

// Flags fill the configuration; a bad value is an error from Train.
func TestFlagsAndErrors(t *testing.T) {
	cfg, err := parseFlags([]string{"-epochs", "3", "-latent", "4", "-samples", "s.png"}, &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, 3, cfg.Epochs)
	require.Equal(t, 4, cfg.Latent)
	require.Equal(t, "s.png", cfg.Samples)
	cfg.Batch = 0
	_, err = Train(cfg, &bytes.Buffer{})
	require.EqualError(t, err, "vae: epochs (3), batch size (0), hidden (32) and latent (4) sizes must be positive")
}
