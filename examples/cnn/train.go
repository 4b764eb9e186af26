package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/data"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Config is what to train and how.
type Config struct {
	Epochs int     // passes over the training set
	Batch  int     // examples per training step
	LR     float64 // Adam's initial learning rate (it decays along a cosine)
	Seed   uint64  // seeds the split, the shuffles and the initial weights

	Digits     string // the UCI digits file; "" finds the one examples/mlp ships
	Fashion    bool   // Fashion-MNIST instead of the digits
	FashionDir string // "" for Debian's dataset-fashion-mnist folder
	Save       string // write the trained model here (safetensors)

	// Device runs the training and evaluation programs on a GPU (see
	// package cuda and the -gpu flag); nil runs them on the CPU.
	Device vm.Device
}

// DefaultConfig trains on the digits to a test accuracy above 0.985 in a
// few seconds.
func DefaultConfig() Config { return Config{Epochs: 15, Batch: 32, LR: 3e-3, Seed: 1} }

// Result is what a training run measured.
type Result struct {
	TestAccuracy []float64 // after each epoch
	Accuracy     float64   // at the end
	Duration     time.Duration
}

// images is a data set of square single-channel images "x" (N, 1, side,
// side) with pixels in 0..maxPixel and integer labels "y".
type images struct {
	train, test   *data.Tensors
	side, classes int
	maxPixel      float64
}

// Train trains the network as cfg says, reporting each epoch to out. The
// training step (forward, backward, Adam and the batch-norm statistics) is
// one program per batch size, kept by a vm.Runner; evaluation is another
// Runner, sharing the parameters, with batch normalisation in evaluation
// mode.
func Train(cfg Config, out io.Writer) (Result, error) {
	start := time.Now()
	if cfg.Epochs <= 0 || cfg.Batch <= 0 {
		return Result{}, fmt.Errorf("cnn: epochs (%d) and batch size (%d) must be positive", cfg.Epochs, cfg.Batch)
	}
	set, err := load(cfg)
	if err != nil {
		return Result{}, err
	}
	fmt.Fprintf(out, "%d training and %d test images of %d×%d pixels, %d classes\n",
		set.train.Len(), set.test.Len(), set.side, set.side, set.classes)

	g := graph.New()
	model := buildModel(g, cfg, set)
	x := g.Input("x", tensor.Float32, cfg.Batch, 1, set.side, set.side)
	y := g.Input("y", tensor.Int64, cfg.Batch)
	scaled := ops.Scale(x, 1/set.maxPixel) // pixels to [0, 1], inside the program

	nn.SetTraining(model, true)
	loss := nn.CrossEntropy(model.Forward(scaled), y)
	opt := nn.NewAdam(nn.DefaultAdam().WithLR(cfg.LR))
	var devOpts []vm.Option
	if cfg.Device != nil {
		devOpts = append(devOpts, vm.OnDevice(cfg.Device))
		fmt.Fprintf(out, "running on %v\n", cfg.Device)
	}
	trainer, err := vm.NewRunner([]*graph.Node{loss}, nil, func(outs []*graph.Node) (map[*graph.Node]*graph.Node, error) {
		return nn.TrainingUpdates(opt, outs[0], model)
	}, devOpts...)
	if err != nil {
		return Result{}, err
	}
	nn.SetTraining(model, false)
	logits := model.Forward(scaled)
	evaluator, err := vm.NewRunner([]*graph.Node{logits}, nil, nil, append(devOpts, vm.SharingParams(trainer.Machine()))...)
	if err != nil {
		return Result{}, err
	}
	fmt.Fprintf(out, "model:\n%v\n", model)

	batches, err := data.NewLoader(set.train, cfg.Batch, tensor.Float32, tensor.Int64)
	if err != nil {
		return Result{}, err
	}
	tests, err := data.NewLoader(set.test, min(set.test.Len(), 500), tensor.Float32, tensor.Int64)
	if err != nil {
		return Result{}, err
	}
	// The learning rate decays along a cosine to a twentieth of its start.
	schedule := nn.CosineLR{Base: cfg.LR, Min: cfg.LR / 20, Total: cfg.Epochs * batches.Len()}
	step := 0
	var res Result
	for epoch := range cfg.Epochs {
		set.train.Shuffle(cfg.Seed + uint64(epoch) + 1)
		bar := data.NewProgress(out, set.train.Len(), fmt.Sprintf("epoch %d/%d", epoch+1, cfg.Epochs))
		for i := range batches.Len() {
			b, err := batches.Batch(i)
			if err != nil {
				return Result{}, err
			}
			if err := nn.Apply(schedule, opt, trainer.Machine(), step); err != nil {
				return Result{}, err
			}
			step++
			if err := trainer.Run(vm.Feeds{x: b[0], y: b[1]}); err != nil {
				return Result{}, err
			}
			l, err := trainer.Scalar(loss)
			if err != nil {
				return Result{}, err
			}
			bar.Add(b[1].Shape()[0], l)
		}
		acc, err := accuracy(evaluator, tests, x, y, logits)
		if err != nil {
			return Result{}, err
		}
		res.TestAccuracy = append(res.TestAccuracy, acc)
		bar.Finish(fmt.Sprintf("train loss %.4f, test accuracy %.4f, %.0f images/s", bar.Loss(), acc, bar.Throughput()))
	}
	res.Accuracy = res.TestAccuracy[len(res.TestAccuracy)-1]
	if cfg.Save != "" {
		if err := save(cfg.Save, trainer.Machine(), model); err != nil {
			return Result{}, err
		}
		fmt.Fprintf(out, "saved the model to %s\n", cfg.Save)
	}
	res.Duration = time.Since(start)
	fmt.Fprintf(out, "test accuracy: %.4f\n", res.Accuracy)
	return res, nil
}

// buildModel makes the network: two blocks of 3×3 convolution, batch
// normalisation, ReLU and 2×2 max pooling, then a linear layer. Its names
// are those of bench/torch/load_cnn.py's PyTorch model.
func buildModel(g *graph.Graph, cfg Config, set images) *nn.Sequential {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0))
	c1, c2 := 16, 32
	if cfg.Fashion {
		c1, c2 = 32, 64
	}
	same := ops.ConvOptions{Padding: []int{1}}
	pool := ops.PoolOptions{Kernel: []int{2}}
	f32 := nn.WithDType(graph.Float32)
	side := set.side / 4
	return nn.NewSequential("cnn",
		nn.NewConv2d(g, "conv1", 1, c1, []int{3}, true, same, nn.WithRand(rng), f32),
		nn.NewBatchNorm2d(g, "bn1", c1, 1e-5, 0.1, f32),
		nn.ReLU{},
		nn.MaxPool2d{Options: pool},
		nn.NewConv2d(g, "conv2", c1, c2, []int{3}, true, same, nn.WithRand(rng), f32),
		nn.NewBatchNorm2d(g, "bn2", c2, 1e-5, 0.1, f32),
		nn.ReLU{},
		nn.MaxPool2d{Options: pool},
		nn.Flatten{StartDim: 1},
		nn.NewLinear(g, "fc", c2*side*side, set.classes, true, nn.WithRand(rng), f32),
	)
}

// accuracy runs the evaluator over the test set, a batch at a time.
func accuracy(r *vm.Runner, tests *data.Loader, x, y, logits *graph.Node) (float64, error) {
	correct, total := 0, 0
	for i := range tests.Len() {
		b, err := tests.Batch(i)
		if err != nil {
			return 0, err
		}
		if err := r.Run(vm.Feeds{x: b[0], y: b[1]}); err != nil {
			return 0, err
		}
		l, err := r.Value(logits)
		if err != nil {
			return 0, err
		}
		scores, classes := graph.Float64s(l), l.Shape()[1]
		for row, label := range b[1].Int64s() {
			if data.Argmax(scores[row*classes:(row+1)*classes]) == int(label) {
				correct++
			}
			total++
		}
	}
	return float64(correct) / float64(total), nil
}

// load reads the digits (split 80/20 with cfg.Seed) or Fashion-MNIST, as
// images of one channel.
func load(cfg Config) (images, error) {
	if cfg.Fashion {
		train, test, err := data.FashionMNIST(cfg.FashionDir)
		if err != nil {
			return images{}, fmt.Errorf("cnn: -fashion needs the Fashion-MNIST files: %w", err)
		}
		for _, d := range []*data.Tensors{train, test} {
			if err := d.Reshape("x", 1, 28, 28); err != nil {
				return images{}, err
			}
		}
		// data.LoadIDX has scaled the pixels to [0, 1] already.
		return images{train: train, test: test, side: 28, classes: data.FashionMNISTClasses, maxPixel: 1}, nil
	}
	path := cfg.Digits
	if path == "" {
		path = findDigits()
	}
	d, err := data.ReadCSV(path, data.CSVOptions{Label: -1})
	if err != nil {
		return images{}, fmt.Errorf("cnn: %w (give the file with -digits)", err)
	}
	if err := d.Reshape("x", 1, 8, 8); err != nil {
		return images{}, fmt.Errorf("cnn: %s: %w", path, err)
	}
	train, test, err := d.Split(0.2, cfg.Seed)
	if err != nil {
		return images{}, fmt.Errorf("cnn: %w", err)
	}
	return images{train: train, test: test, side: 8, classes: 10, maxPixel: 16}, nil
}

// findDigits looks for the digits examples/mlp ships, from the repository
// (go run) or from this folder (go test).
func findDigits() string {
	candidates := []string{
		filepath.Join("examples", "mlp", "testdata", "digits.csv.gz"),
		filepath.Join("..", "mlp", "testdata", "digits.csv.gz"),
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		candidates = append(candidates, filepath.Join(filepath.Dir(file), "..", "mlp", "testdata", "digits.csv.gz"))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return candidates[0]
}

// save writes the model's parameters and batch-norm statistics under
// PyTorch's names (conv1.weight, bn1.running_mean, ...).
func save(path string, m *vm.Machine, model nn.Module) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := nn.Save(f, m, nn.StateOf(model)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
