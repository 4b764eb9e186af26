// Command mlp trains a multilayer perceptron to classify handwritten digits
// (the UCI digits shipped in testdata, or Fashion-MNIST with -fashion) and
// prints its test accuracy.
//
//	go run ./examples/mlp
//	go run ./examples/mlp -epochs 30 -hidden 128,64 -save model.safetensors -plot loss.png -dot graph.dot
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	cfg := DefaultConfig()
	flag.IntVar(&cfg.Epochs, "epochs", cfg.Epochs, "passes over the training set")
	flag.IntVar(&cfg.Batch, "batch", cfg.Batch, "examples per training step")
	flag.Float64Var(&cfg.LR, "lr", cfg.LR, "Adam's learning rate")
	hidden := flag.String("hidden", joinInts(cfg.Hidden), "hidden layer sizes, comma-separated (\"\" for none)")
	flag.Float64Var(&cfg.Dropout, "dropout", cfg.Dropout, "dropout probability after each hidden layer")
	flag.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the split, shuffles, initial weights and dropout")
	flag.StringVar(&cfg.Digits, "digits", "", "the UCI digits file (default: testdata/digits.csv.gz)")
	flag.BoolVar(&cfg.Fashion, "fashion", false, "train on Fashion-MNIST instead of the digits")
	flag.StringVar(&cfg.FashionDir, "fashion-dir", "", "folder of the Fashion-MNIST files (default: Debian's dataset-fashion-mnist folder)")
	flag.StringVar(&cfg.Save, "save", "", "write the trained parameters and optimiser state to this safetensors file")
	flag.StringVar(&cfg.Plot, "plot", "", "plot the training and test loss per epoch to this PNG file")
	flag.StringVar(&cfg.Dot, "dot", "", "write the training step's graph to this Graphviz DOT file")
	flag.Parse()
	sizes, err := parseInts(*hidden)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mlp: -hidden:", err)
		os.Exit(2)
	}
	cfg.Hidden = sizes
	if _, err := Train(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// parseInts reads a comma-separated list of positive sizes.
func parseInts(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive size", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}
