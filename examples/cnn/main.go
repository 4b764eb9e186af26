// Command cnn trains a small convolutional network (two convolution blocks
// with batch normalisation and max pooling, then a linear classifier) with
// integer labels, on the UCI digits shipped with examples/mlp (8×8 images)
// or, with -fashion, on Fashion-MNIST (28×28), and prints its test accuracy.
//
//	go run ./examples/cnn
//	go run ./examples/cnn -fashion              # 3 epochs of batches of 64
//	go run ./examples/cnn -save cnn.safetensors   # loadable by bench/torch/load_cnn.py
//	go run -tags gpu ./examples/cnn -gpu          # train on the first NVIDIA GPU
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/nabla-go/nabla/vm"
)

func main() {
	cfg := DefaultConfig()
	fs := flag.NewFlagSet("cnn", flag.ContinueOnError)
	fs.IntVar(&cfg.Epochs, "epochs", cfg.Epochs, "passes over the training set")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "examples per training step")
	fs.Float64Var(&cfg.LR, "lr", cfg.LR, "Adam's learning rate")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the split, the shuffles and the initial weights")
	fs.StringVar(&cfg.Digits, "digits", "", "the UCI digits file (default: examples/mlp/testdata/digits.csv.gz)")
	fs.BoolVar(&cfg.Fashion, "fashion", false, "train on Fashion-MNIST instead of the digits")
	fs.StringVar(&cfg.FashionDir, "fashion-dir", "", "folder of the Fashion-MNIST files (default: Debian's dataset-fashion-mnist folder)")
	fs.StringVar(&cfg.Save, "save", "", "write the trained model to this safetensors file")
	useGPU := fs.Bool("gpu", false, "train on the first NVIDIA GPU (needs a build with -tags gpu)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == flag.ErrHelp {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if cfg.Fashion && !isSet(fs, "epochs") {
		cfg.Epochs = 3
	}
	if cfg.Fashion && !isSet(fs, "batch") {
		cfg.Batch = 64
	}
	if *useGPU {
		dev, err := openGPU()
		if err != nil {
			fmt.Fprintln(os.Stderr, "cnn: -gpu:", err)
			os.Exit(1)
		}
		defer dev.Close()
		cfg.Device = dev
	}
	if _, err := Train(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// isSet reports whether the command line gave the flag name.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// gpuDevice is a device the command can close (a *cuda.Device).
type gpuDevice interface {
	vm.Device
	Close() error
}
