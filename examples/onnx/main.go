// Command onnx imports a convolutional network that PyTorch exported
// (testdata/cnn.onnx, written by testdata/export_cnn.py), evaluates it on
// the UCI digits shipped with examples/mlp, fine-tunes it with nabla's Adam,
// exports the result as ONNX and checks that ONNX Runtime predicts the
// same classes, when onnxruntime-node is installed. Last, it computes a
// Hessian–vector product of the imported model's loss, which neither the
// ONNX file nor ONNX Runtime can give, and checks it against finite
// differences of the gradient.
//
//	go run ./examples/onnx
//	go run ./examples/onnx -epochs 1 -out tuned.onnx
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	cfg := DefaultConfig()
	fs := flag.NewFlagSet("onnx", flag.ContinueOnError)
	fs.IntVar(&cfg.Epochs, "epochs", cfg.Epochs, "passes over the training rows")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "examples per training step")
	fs.Float64Var(&cfg.LR, "lr", cfg.LR, "Adam's learning rate")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the shuffles and of the Hessian–vector product's direction")
	fs.StringVar(&cfg.Model, "model", "", "the ONNX model to fine-tune (default: examples/onnx/testdata/cnn.onnx)")
	fs.StringVar(&cfg.Digits, "digits", "", "the UCI digits file (default: examples/mlp/testdata/digits.csv.gz)")
	fs.StringVar(&cfg.Out, "out", "", "write the fine-tuned model here (default: a temporary file)")
	fs.StringVar(&cfg.ORT, "ort", "", "folder holding node_modules/onnxruntime-node (default: $ONNXRUNTIME_NODE or ~/.cache/nabla-onnxruntime)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == flag.ErrHelp {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if _, err := Run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
