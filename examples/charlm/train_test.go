package main

import (
	"bytes"
	"math"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// tiny is a configuration that trains in a few seconds.
func tiny() Config {
	cfg := DefaultConfig()
	cfg.Steps, cfg.EvalEvery = 60, 20
	cfg.Batch, cfg.Context = 16, 16
	cfg.Embed, cfg.Heads, cfg.Layers, cfg.FF = 16, 2, 1, 32
	cfg.LR = 1e-2
	cfg.SampleChars = 50
	return cfg
}

// A few steps on the shipped text learn: the validation loss starts near
// uniform guessing over the vocabulary and falls, the training loss falls,
// and the sample holds only characters of the vocabulary. The second run
// has sinusoidal positions and dropout.
func TestTrainTiny(t *testing.T) {
	for _, sinusoidal := range []bool{false, true} {
		cfg := tiny()
		cfg.Sinusoidal = sinusoidal
		if sinusoidal {
			cfg.Dropout = 0.1
		}
		var out bytes.Buffer
		res, err := Train(cfg, &out)
		require.NoError(t, err, out.String())
		uniform := math.Log2(float64(len(res.Vocab)))
		require.InDelta(t, uniform, res.InitialBPC, 0.5, "an untrained model guesses almost uniformly")
		require.Len(t, res.ValBPC, 3)
		require.Less(t, res.BPC, res.InitialBPC-0.5, "validation loss falls: %v → %v", res.InitialBPC, res.ValBPC)
		require.Less(t, res.TrainLoss[2], res.TrainLoss[0], "training loss falls: %v", res.TrainLoss)

		prompt := firstLine(mustCorpus(t, cfg).decode(mustCorpus(t, cfg).val))
		require.Equal(t, prompt, string([]rune(res.Sample)[:len([]rune(prompt))]))
		require.Len(t, []rune(res.Sample), len([]rune(prompt))+cfg.SampleChars)
		for _, r := range res.Sample {
			require.Contains(t, res.Vocab, r, "sampled character %q", r)
		}
		require.Regexp(t, regexp.MustCompile(`(?m)^steps 41-60/60: train loss \d+\.\d{4} \(\d+\.\d{3} bits/char\), validation \d+\.\d{3} bits/char, \d+ chars/s$`), out.String())
		require.Regexp(t, regexp.MustCompile(`(?m)^validation: \d\.\d{3} bits per character$`), out.String())
		require.Contains(t, out.String(), "sample (temperature 0.8, seed 1):\n"+res.Sample+"\n")

		// The same seed gives the same run.
		again, err := Train(cfg, &bytes.Buffer{})
		require.NoError(t, err)
		require.Equal(t, res.Sample, again.Sample)
		require.Equal(t, res.BPC, again.BPC)
	}
}

// mustCorpus reads the text cfg trains on.
func mustCorpus(t *testing.T, cfg Config) *corpus {
	t.Helper()
	c, err := readCorpus(findText(), cfg.ValFraction)
	require.NoError(t, err)
	return c
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Steps = 0 }, "must be positive"},
		{func(c *Config) { c.Context = -1 }, "context (-1)"},
		{func(c *Config) { c.Dropout = 1 }, "dropout probability 1"},
		{func(c *Config) { c.LR = math.NaN() }, "learning rate NaN"},
		{func(c *Config) { c.Heads = 3 }, "multiple of heads 3"},
		{func(c *Config) { c.ValFraction = 1 }, "validation fraction 1"},
		{func(c *Config) { c.Text = "no/such/file.txt" }, "no/such/file.txt"},
		{func(c *Config) { c.Prompt = "¿" }, "not in the vocabulary"},
	} {
		cfg := tiny()
		cfg.Steps, cfg.EvalEvery = 1, 1
		c.change(&cfg)
		_, err := Train(cfg, &bytes.Buffer{})
		require.ErrorContains(t, err, c.want)
	}
}
