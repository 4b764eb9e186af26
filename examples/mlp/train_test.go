package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/nn"
)

// A short run learns: the loss falls and the accuracy is far above chance
// (0.1 for ten classes), and every output the flags ask for is written.
func TestTrainShort(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Epochs = 5
	cfg.Hidden = []int{32}
	cfg.Save = filepath.Join(dir, "model.safetensors")
	cfg.Dot = filepath.Join(dir, "graph.dot")
	var out bytes.Buffer
	res, err := Train(cfg, &out)
	require.NoError(t, err)

	require.Len(t, res.TrainLoss, 5)
	require.Len(t, res.TestLoss, 5)
	require.Less(t, res.TrainLoss[4], res.TrainLoss[0]/2, "training loss falls: %v", res.TrainLoss)
	require.Less(t, res.TestLoss[4], res.TestLoss[0]/2, "test loss falls: %v", res.TestLoss)
	require.Greater(t, res.Accuracy, 0.5, "accuracy far above chance")
	require.Regexp(t, regexp.MustCompile(`(?m)^epoch 5/5: train loss \d+\.\d{4}, test loss \d+\.\d{4}, test accuracy [01]\.\d{4}, \d+ rows/s$`), out.String())
	require.Regexp(t, regexp.MustCompile(`\ntest accuracy: [01]\.\d{4}\n$`), out.String())

	for _, path := range []string{cfg.Save, cfg.Dot} {
		info, err := os.Stat(path)
		require.NoError(t, err)
		require.NotZero(t, info.Size(), path)
	}
	dot, err := os.ReadFile(cfg.Dot)
	require.NoError(t, err)
	require.Contains(t, string(dot), "digraph")
	require.Contains(t, string(dot), "hidden1")

	// The checkpoint holds the model and Adam's state under their names.
	f, err := os.Open(cfg.Save)
	require.NoError(t, err)
	defer f.Close()
	tensors, _, err := nn.ReadSafetensors(f)
	require.NoError(t, err)
	for _, name := range []string{"hidden1.weight", "hidden1.bias", "dropout1.step", "output.weight", "optimizer.step", "optimizer.exp_avg.output.bias"} {
		require.Contains(t, tensors, name)
	}
	require.Equal(t, []int{32, 64}, []int(tensors["hidden1.weight"].Shape()))
}

// The same seed gives the same run.
func TestTrainIsReproducible(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Epochs = 1
	cfg.Hidden = []int{16}
	var out bytes.Buffer
	a, err := Train(cfg, &out)
	require.NoError(t, err)
	b, err := Train(cfg, &out)
	require.NoError(t, err)
	require.Equal(t, a.TrainLoss, b.TrainLoss)
	require.Equal(t, a.TestAccuracy, b.TestAccuracy)
}

func TestTrainErrors(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Fashion, cfg.FashionDir = true, t.TempDir()
	_, err := Train(cfg, &bytes.Buffer{})
	require.ErrorContains(t, err, "-fashion needs the Fashion-MNIST files")
	require.ErrorContains(t, err, "apt-get install dataset-fashion-mnist")

	cfg = DefaultConfig()
	cfg.Digits = filepath.Join(t.TempDir(), "missing.csv.gz")
	_, err = Train(cfg, &bytes.Buffer{})
	require.ErrorContains(t, err, "missing.csv.gz")

	cfg = DefaultConfig()
	cfg.Batch = 0
	_, err = Train(cfg, &bytes.Buffer{})
	require.ErrorContains(t, err, "batch size (0) must be positive")
}

func TestParseInts(t *testing.T) {
	got, err := parseInts(" 64, 32 ")
	require.NoError(t, err)
	require.Equal(t, []int{64, 32}, got)
	got, err = parseInts("")
	require.NoError(t, err)
	require.Empty(t, got)
	for _, bad := range []string{"64,x", "0", "-3", "64,,32"} {
		_, err := parseInts(bad)
		require.Error(t, err, "case %q", bad)
	}
	require.Equal(t, "256,128", joinInts([]int{256, 128}))
}

// -profile times the training machine's instructions and prints the 10
// slowest; the last line is still the accuracy.
func TestTrainProfile(t *testing.T) {
	cfg, err := parseFlags([]string{"-profile", "-epochs", "1", "-hidden", "16"}, &bytes.Buffer{})
	require.NoError(t, err)
	require.True(t, cfg.Profile)
	var out bytes.Buffer
	_, err = Train(cfg, &out)
	require.NoError(t, err)
	text := out.String()
	require.Regexp(t, regexp.MustCompile(`(?m)^profile of the training step, the 10 slowest instructions:\n\d+ instructions, .+ in total\ninstr +op +node +shape +calls +time +mean +% +GFLOP/s$`), text)
	// The profile is the 32-row program's: each row ran once per full
	// batch, 44 of them over the 1438 training digits (the last 30 rows
	// run on the Runner's 30-row program).
	rows := regexp.MustCompile(`(?m)^\d+ +\S+ +#\d+ .*train\.go:\d+ +\([\d,]*\) +44 +\S+ +\S+ +\d+\.\d +(-|\d+\.\d\d)$`)
	require.Len(t, rows.FindAllString(text, -1), 10, text)
	require.Regexp(t, regexp.MustCompile(`(?m)^ +\d+ more +`), text)
	require.Regexp(t, regexp.MustCompile(`\ntest accuracy: [01]\.\d{4}\n$`), text)

	cfg.Profile = false
	out.Reset()
	_, err = Train(cfg, &out)
	require.NoError(t, err)
	require.NotContains(t, out.String(), "GFLOP/s")
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags(nil, &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, DefaultConfig(), cfg)
	cfg, err = parseFlags([]string{"-hidden", "64,32", "-lr", "0.01"}, &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, []int{64, 32}, cfg.Hidden)
	require.Equal(t, 0.01, cfg.LR)
	_, err = parseFlags([]string{"-hidden", "x"}, &bytes.Buffer{})
	require.ErrorContains(t, err, `-hidden: "x" is not a positive size`)
	var usage bytes.Buffer
	_, err = parseFlags([]string{"-nope"}, &usage)
	require.Error(t, err)
	require.Contains(t, usage.String(), "-profile")
}

// -fashion reads IDX files: here four 2×2 images to train on and three to
// test on, trained in batches of 3 (a last batch of 1).
func TestTrainFashionFiles(t *testing.T) {
	dir := t.TempDir()
	idx := func(name string, dims []byte, data ...byte) {
		b := []byte{0, 0, 8, byte(len(dims))}
		for _, d := range dims {
			b = append(b, 0, 0, 0, d)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), append(b, data...), 0o644))
	}
	idx("train-images-idx3-ubyte", []byte{4, 2, 2}, 255, 0, 0, 0, 0, 255, 0, 0, 0, 0, 255, 0, 0, 0, 0, 255)
	idx("train-labels-idx1-ubyte", []byte{4}, 0, 1, 2, 3)
	idx("t10k-images-idx3-ubyte", []byte{3, 2, 2}, 255, 0, 0, 0, 0, 255, 0, 0, 0, 0, 255, 0)
	idx("t10k-labels-idx1-ubyte", []byte{3}, 0, 1, 2)
	cfg := DefaultConfig()
	cfg.Fashion, cfg.FashionDir = true, dir
	cfg.Epochs, cfg.Batch, cfg.Hidden = 2, 3, []int{8}
	var out bytes.Buffer
	res, err := Train(cfg, &out)
	require.NoError(t, err)
	require.Contains(t, out.String(), "4 training and 3 test examples, 4 features, 10 classes")
	require.Len(t, res.TestAccuracy, 2)
}
