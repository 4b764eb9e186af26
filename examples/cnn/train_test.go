package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/data"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// The default run reaches the accuracy the README promises, on integer
// labels, and its checkpoint holds PyTorch's names.
func TestTrainDigits(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Save = filepath.Join(t.TempDir(), "cnn.safetensors")
	var out bytes.Buffer
	res, err := Train(cfg, &out)
	require.NoError(t, err, out.String())
	require.GreaterOrEqual(t, res.Accuracy, 0.985, out.String())
	require.Regexp(t, regexp.MustCompile(`\(conv1\): Conv2d\(1, 16, kernel_size=\(3, 3\), stride=\(1, 1\), padding=\(1, 1\)\)`), out.String())
	require.Regexp(t, regexp.MustCompile(`(?m)^test accuracy: 0\.9\d{3}$`), out.String())

	// PyTorch, when installed, loads the checkpoint into the same network
	// and predicts the same classes (bench/torch/load_cnn.py).
	script, err := filepath.Abs(filepath.Join("..", "..", "bench", "torch", "load_cnn.py"))
	require.NoError(t, err)
	digits, err := filepath.Abs(findDigits())
	require.NoError(t, err)
	cmd := exec.Command("/usr/bin/python3", script, cfg.Save, digits)
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("load_cnn.py did not run (%v): %s", err, got)
		return
	}
	if bytes.HasPrefix(got, []byte("skipped")) {
		t.Log(string(got))
		return
	}
	m := regexp.MustCompile(`(?m)^predictions: ([\d,]+)$`).FindSubmatch(got)
	require.NotNil(t, m, string(got))
	require.Equal(t, predictions(t, cfg, digits), string(m[1]))
}

// predictions loads the checkpoint into a fresh network in evaluation
// mode and returns its classes for every digit, comma-separated.
func predictions(t *testing.T, cfg Config, digits string) string {
	d, err := data.ReadCSV(digits, data.CSVOptions{Label: -1})
	require.NoError(t, err)
	require.NoError(t, d.Reshape("x", 1, 8, 8))
	g := graph.New()
	model := buildModel(g, cfg, images{side: 8, classes: 10})
	nn.SetTraining(model, false)
	x := g.Input("x", tensor.Float32, d.Len(), 1, 8, 8)
	logits := model.Forward(ops.Scale(x, 1.0/16))
	outputs := []*graph.Node{logits}
	for _, n := range nn.NamedBuffers(model) { // the batch counters too, for Load
		outputs = append(outputs, n.Node)
	}
	p, err := compile.Compile(outputs)
	require.NoError(t, err)
	m, err := vm.New(p)
	require.NoError(t, err)
	f, err := os.Open(cfg.Save)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, nn.Load(f, m, nn.StateOf(model)))
	xs, err := data.NewLoader(d, d.Len(), tensor.Float32, tensor.Int64)
	require.NoError(t, err)
	b, err := xs.Batch(0)
	require.NoError(t, err)
	require.NoError(t, m.Run(vm.Feeds{x: b[0]}))
	l, err := m.Value(logits)
	require.NoError(t, err)
	scores := graph.Float64s(l)
	out := make([]string, d.Len())
	for i := range out {
		out[i] = strconv.Itoa(data.Argmax(scores[i*10 : (i+1)*10]))
	}
	return strings.Join(out, ",")
}

func TestTrainErrors(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Fashion, cfg.FashionDir = true, t.TempDir()
	_, err := Train(cfg, &bytes.Buffer{})
	require.ErrorContains(t, err, "-fashion needs the Fashion-MNIST files")
	cfg = DefaultConfig()
	cfg.Epochs = 0
	_, err = Train(cfg, &bytes.Buffer{})
	require.ErrorContains(t, err, "must be positive")
}

// The network sees pixels in [0, 1] whichever data set it trains on: the
// Fashion-MNIST loader scales them already, the digits' range is 0..16.
func TestPixelsReachTheNetworkInUnitRange(t *testing.T) {
	for _, fashion := range []bool{false, true} {
		set, err := load(Config{Fashion: fashion, Seed: 1})
		if err != nil {
			t.Logf("fashion %v: %v (skipped)", fashion, err)
			continue
		}
		top := 0.0
		for _, v := range graph.Float64s(set.train.Column("x")) {
			top = max(top, v/set.maxPixel)
		}
		require.InDelta(t, 1, top, 1e-6, "fashion %v: the brightest pixel reaches the network as %v", fashion, top)
	}
}
