// Command mlp trains a multilayer perceptron to classify handwritten digits
// (the UCI digits shipped in testdata, or Fashion-MNIST with -fashion) and
// prints its test accuracy.
//
//	go run ./examples/mlp
//	go run ./examples/mlp -epochs 30 -hidden 128,64 -save model.safetensors -dot graph.dot
//	go run -tags plot ./examples/mlp -plot loss.png   # draw the losses (gonum.org/v1/plot)
//	go run ./examples/mlp -profile   # time each instruction of the training step
//	go run -tags gpu ./examples/mlp -gpu   # train on the first NVIDIA GPU
//	go build -tags mpi ./examples/mlp && mpirun -np 2 ./mlp -dist   # on two processes
//	go build -tags "gpu mpi" ./examples/mlp && mpirun -np 8 ./mlp -dist -gpu   # eight ranks, one GPU each
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/nabla-go/nabla/vm"
)

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mlp:", err)
		os.Exit(2)
	}
	var c cluster
	if *useDist {
		if c, err = openCluster(); err != nil {
			fmt.Fprintln(os.Stderr, "mlp: -dist:", err)
			os.Exit(1)
		}
		cfg.Cluster = c
	}
	if *useGPU {
		gpu := 0 // with -dist, each rank on a machine its own GPU
		if c != nil {
			gpu = c.LocalRank()
		}
		dev, err := openGPU(gpu)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mlp: -gpu:", err)
			os.Exit(1)
		}
		defer dev.Close()
		cfg.Device = dev
	}
	if _, err := Train(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if c != nil {
		if err := c.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "mlp: -dist:", err)
			os.Exit(1)
		}
	}
}

// cluster is a Cluster the command can close (a *dist.Comm), which
// numbers the ranks on this machine.
type cluster interface {
	Cluster
	Close() error
	LocalRank() int
}

// gpuDevice is a device the command can close (a *cuda.Device).
type gpuDevice interface {
	vm.Device
	Close() error
}

// useGPU and useDist are the -gpu and -dist flags.
var useGPU, useDist = new(bool), new(bool)

// parseFlags reads the command line into a Config, writing usage and flag
// errors to errOut.
func parseFlags(args []string, errOut io.Writer) (Config, error) {
	cfg := DefaultConfig()
	fs := flag.NewFlagSet("mlp", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.IntVar(&cfg.Epochs, "epochs", cfg.Epochs, "passes over the training set")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "examples per training step")
	fs.Float64Var(&cfg.LR, "lr", cfg.LR, "Adam's learning rate")
	hidden := fs.String("hidden", joinInts(cfg.Hidden), "hidden layer sizes, comma-separated (\"\" for none)")
	fs.Float64Var(&cfg.Dropout, "dropout", cfg.Dropout, "dropout probability after each hidden layer")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the split, shuffles, initial weights and dropout")
	fs.StringVar(&cfg.Digits, "digits", "", "the UCI digits file (default: testdata/digits.csv.gz)")
	fs.BoolVar(&cfg.Fashion, "fashion", false, "train on Fashion-MNIST instead of the digits")
	fs.StringVar(&cfg.FashionDir, "fashion-dir", "", "folder of the Fashion-MNIST files (default: Debian's dataset-fashion-mnist folder)")
	fs.StringVar(&cfg.Save, "save", "", "write the trained parameters and optimiser state to this safetensors file")
	fs.StringVar(&cfg.Plot, "plot", "", "plot the training and test loss per epoch to this PNG file (needs a build with -tags plot)")
	fs.StringVar(&cfg.Dot, "dot", "", "write the training step's graph to this Graphviz DOT file")
	fs.BoolVar(&cfg.Profile, "profile", false, "time each instruction of the training step and print the 10 slowest")
	fs.BoolVar(useGPU, "gpu", false, "train on the first NVIDIA GPU; with -dist, each rank on its machine's GPU numbered by its local rank (needs a build with -tags gpu)")
	fs.BoolVar(useDist, "dist", false, "train data-parallel on the processes of an MPI launch, -batch rows a step across them (needs a build with -tags mpi)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	sizes, err := parseInts(*hidden)
	if err != nil {
		return cfg, fmt.Errorf("-hidden: %w", err)
	}
	cfg.Hidden = sizes
	return cfg, nil
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
