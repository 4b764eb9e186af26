// Command charlm trains a small character-level transformer language model
// (token and position embeddings, causal pre-norm transformer blocks, a
// final LayerNorm and a linear head) on a text, by default the
// Shakespeare shipped in testdata (public domain; see testdata/README.md).
// It prints the training loss and the validation loss in bits per
// character as it goes, then a continuation sampled at a temperature.
//
//	go run ./examples/charlm
//	go run ./examples/charlm -steps 3000 -embed 128 -layers 4
//	go run ./examples/charlm -prompt "KING RICHARD III:" -sample 600 -temperature 0.6
//	go run ./examples/charlm -profile   # time each instruction of the training step
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	cfg := DefaultConfig()
	fs := flag.NewFlagSet("charlm", flag.ContinueOnError)
	fs.IntVar(&cfg.Steps, "steps", cfg.Steps, "training steps")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "windows of text per step")
	fs.IntVar(&cfg.Context, "context", cfg.Context, "characters per window")
	fs.IntVar(&cfg.Embed, "embed", cfg.Embed, "width of the model")
	fs.IntVar(&cfg.Heads, "heads", cfg.Heads, "attention heads")
	fs.IntVar(&cfg.Layers, "layers", cfg.Layers, "transformer blocks")
	fs.IntVar(&cfg.FF, "ff", cfg.FF, "width of the feed-forward layers")
	fs.Float64Var(&cfg.Dropout, "dropout", cfg.Dropout, "drop probability in the blocks")
	fs.Float64Var(&cfg.LR, "lr", cfg.LR, "peak learning rate")
	fs.IntVar(&cfg.EvalEvery, "eval-every", cfg.EvalEvery, "steps between validation passes")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the weights, the windows and the sample")
	fs.BoolVar(&cfg.Sinusoidal, "sinusoidal", cfg.Sinusoidal, "fixed sinusoidal positions instead of learned ones")
	fs.StringVar(&cfg.Text, "text", "", "a UTF-8 text file to train on (default: examples/charlm/testdata/shakespeare.txt)")
	fs.Float64Var(&cfg.ValFraction, "val", cfg.ValFraction, "fraction of the text, at its end, held out for validation")
	fs.IntVar(&cfg.SampleChars, "sample", cfg.SampleChars, "characters to sample after training")
	fs.Float64Var(&cfg.Temperature, "temperature", cfg.Temperature, "sampling temperature (0: the likeliest character)")
	fs.StringVar(&cfg.Prompt, "prompt", "", "start of the sample (default: the validation text's first line)")
	fs.BoolVar(&cfg.Profile, "profile", false, "time each instruction of the training step and print the 10 slowest")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == flag.ErrHelp {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if _, err := Train(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
