package main

import (
	"errors"
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
	Epochs  int     // passes over the training set
	Batch   int     // examples per training step
	LR      float64 // Adam's learning rate
	Hidden  []int   // sizes of the hidden layers
	Dropout float64 // drop probability after each hidden layer (0: none)
	Seed    uint64  // seeds the split, the shuffles, the initial weights and dropout

	// Digits is the UCI digits file; "" finds testdata/digits.csv.gz.
	Digits string
	// Fashion trains on Fashion-MNIST from FashionDir ("" for Debian's
	// dataset-fashion-mnist folder) instead of the digits.
	Fashion    bool
	FashionDir string
	// TestFraction of the digits is held out for testing.
	TestFraction float64

	Save string // write the trained model and optimiser state here (safetensors)
	Plot string // draw the training and test loss per epoch here (PNG; needs -tags plot)
	Dot  string // draw the training step's graph here (Graphviz DOT)

	// Profile times each instruction of the training program and prints
	// the slowest after training.
	Profile bool

	// Device runs the training and evaluation programs on a GPU (see
	// package cuda and the -gpu flag); nil runs them on the CPU.
	Device vm.Device

	// Cluster trains data-parallel on the processes of an MPI launch (see
	// package dist and the -dist flag); nil trains in this process alone.
	Cluster Cluster
}

// Cluster is the group of processes training one model together, each
// on its share of every batch (a *dist.Comm, in a build with -tags mpi).
type Cluster interface {
	Rank() int
	Size() int
	// DataParallel averages the gradients over the processes.
	DataParallel() nn.TrainingOption
	// BroadcastState gives every process root's values of state.
	BroadcastState(store nn.ParamStore, state []nn.Named, root int) error
	// Save writes the checkpoint from rank 0.
	Save(path string, store nn.ParamStore, state []nn.Named) error
}

// DefaultConfig is the configuration the command's flags start from: it
// reaches a test accuracy above 0.95 on the digits in a few seconds.
func DefaultConfig() Config {
	return Config{
		Epochs:       30,
		Batch:        32,
		LR:           2e-3,
		Hidden:       []int{256, 128},
		Dropout:      0.2,
		Seed:         1,
		TestFraction: 0.2,
	}
}

// Result is what a training run measured.
type Result struct {
	TrainLoss    []float64 // mean training loss of each epoch
	TestLoss     []float64 // mean test loss after each epoch
	TestAccuracy []float64 // test accuracy after each epoch
	Accuracy     float64   // final test accuracy
	Duration     time.Duration
}

// Train trains an MLP classifier as cfg says, reporting each epoch to out,
// and returns the losses and accuracies it measured. With a Cluster, each
// process trains on cfg.Batch/Size() rows of every batch of cfg.Batch,
// the gradients averaged over the processes, and only rank 0 reports
// (the training loss it reports is its own share's). A training step is
// one compiled program that runs the forward pass, the backward pass and
// the Adam step in one Run; a vm.Runner keeps one for the batch size and
// one for the shorter last batch of an epoch. Evaluation is a second
// Runner, sharing the parameters, that runs the whole test set at once.
func Train(cfg Config, out io.Writer) (Result, error) {
	start := time.Now()
	if cfg.Epochs <= 0 || cfg.Batch <= 0 {
		return Result{}, fmt.Errorf("mlp: epochs (%d) and batch size (%d) must be positive", cfg.Epochs, cfg.Batch)
	}
	if cfg.Plot != "" && !canPlot {
		return Result{}, errNoPlot
	}
	train, test, classes, err := loadData(cfg)
	if err != nil {
		return Result{}, err
	}
	rank, ranks, batch := 0, 1, cfg.Batch
	if cfg.Cluster != nil {
		rank, ranks = cfg.Cluster.Rank(), cfg.Cluster.Size()
		if batch%ranks != 0 {
			return Result{}, fmt.Errorf("mlp: the batch size %d is not a multiple of the %d processes", batch, ranks)
		}
		batch /= ranks
		if rank != 0 {
			out = io.Discard
		}
		fmt.Fprintf(out, "training on %d processes, %d rows of each batch of %d on each\n", ranks, batch, cfg.Batch)
	}
	features := train.Column("x").Shape()[1]
	fmt.Fprintf(out, "%d training and %d test examples, %d features, %d classes\n",
		train.Len(), test.Len(), features, classes)

	g := graph.New()
	// Each process draws its own dropout masks (its seed differs by rank);
	// all start from rank 0's weights.
	model := buildModel(g, cfg, cfg.Seed+uint64(rank)<<32, features, classes)

	// Training: loss, gradients and the optimiser step in one program per
	// batch size (the full batch and a shorter last one).
	x := g.Input("x", tensor.Float64, batch, features)
	y := g.Input("y", tensor.Float64, batch)
	nn.SetTraining(model, true)
	loss := nn.CrossEntropy(model.Forward(x), y)
	opt := nn.NewAdam(nn.DefaultAdam().WithLR(cfg.LR))
	var updates map[*graph.Node]*graph.Node // the step at cfg.Batch, drawn by -dot
	step := func(outs []*graph.Node) (map[*graph.Node]*graph.Node, error) {
		var opts []nn.TrainingOption
		if cfg.Cluster != nil {
			opts = append(opts, cfg.Cluster.DataParallel())
		}
		u, err := nn.TrainingUpdates(opt, outs[0], model, opts...)
		if updates == nil {
			updates = u
		}
		return u, err
	}
	var devOpts []vm.Option
	if cfg.Device != nil {
		devOpts = append(devOpts, vm.OnDevice(cfg.Device))
		fmt.Fprintf(out, "running on %v\n", cfg.Device)
	}
	trainOpts := devOpts
	if cfg.Profile {
		trainOpts = append(trainOpts, vm.WithProfile())
	}
	trainer, err := vm.NewRunner([]*graph.Node{loss}, nil, step, trainOpts...)
	if err != nil {
		return Result{}, err
	}

	// Evaluation: the same parameters, dropout off, the whole test set in
	// one run.
	nn.SetTraining(model, false)
	logits := model.Forward(x)
	losses := ops.CrossEntropy(logits, y)
	evaluator, err := vm.NewRunner([]*graph.Node{logits, losses}, nil, nil, append(devOpts, vm.SharingParams(trainer.Machine()))...)
	if err != nil {
		return Result{}, err
	}
	fmt.Fprintf(out, "model:\n%v\n", model)

	batches, err := data.NewLoader(train, batch, tensor.Float64, tensor.Float64)
	if err != nil {
		return Result{}, err
	}
	if cfg.Cluster != nil {
		if err := batches.Shard(rank, ranks); err != nil {
			return Result{}, err
		}
		if err := cfg.Cluster.BroadcastState(trainer.Machine(), nn.StateOf(model), 0); err != nil {
			return Result{}, err
		}
	}
	whole, err := data.NewLoader(test, test.Len(), tensor.Float64, tensor.Float64) // one batch
	if err != nil {
		return Result{}, err
	}
	ev := evaluation{r: evaluator, test: whole, x: x, y: y, logits: logits, losses: losses}
	var res Result
	for epoch := range cfg.Epochs {
		train.Shuffle(cfg.Seed + uint64(epoch) + 1)
		// The rows of the epoch, of every process (a sharded loader leaves
		// out an incomplete last batch).
		rows := train.Len()
		if cfg.Cluster != nil {
			rows = batches.Len() * cfg.Batch
		}
		bar := data.NewProgress(out, rows, fmt.Sprintf("epoch %d/%d", epoch+1, cfg.Epochs))
		for i := range batches.Len() {
			b, err := batches.Batch(i)
			if err != nil {
				return Result{}, err
			}
			if err := trainer.Run(vm.Feeds{x: b[0], y: b[1]}); err != nil {
				return Result{}, err
			}
			l, err := trainer.Scalar(loss)
			if err != nil {
				return Result{}, err
			}
			bar.Add(b[1].Shape()[0]*ranks, l)
		}
		testLoss, acc, err := ev.run()
		if err != nil {
			return Result{}, err
		}
		res.TrainLoss = append(res.TrainLoss, bar.Loss())
		res.TestLoss = append(res.TestLoss, testLoss)
		res.TestAccuracy = append(res.TestAccuracy, acc)
		bar.Finish(fmt.Sprintf("train loss %.4f, test loss %.4f, test accuracy %.4f, %.0f rows/s",
			res.TrainLoss[epoch], testLoss, acc, bar.Throughput()))
	}
	res.Accuracy = res.TestAccuracy[len(res.TestAccuracy)-1]

	drawn := []*graph.Node{loss}
	for _, n := range nn.Parameters(model) {
		drawn = append(drawn, updates[n])
	}
	if err := writeOutputs(cfg, rank, trainer.Machine(), model, opt, res, drawn, out); err != nil {
		return Result{}, err
	}
	res.Duration = time.Since(start)
	fmt.Fprintf(out, "test accuracy: %.4f\n", res.Accuracy)
	return res, nil
}

// buildModel makes the MLP: Linear layers with ReLU (and dropout) between
// them, initialised from one generator seeded with seed.
func buildModel(g *graph.Graph, cfg Config, seed uint64, features, classes int) *nn.Sequential {
	rng := rand.New(rand.NewPCG(seed, 0))
	var layers []nn.Module
	in := features
	for i, h := range cfg.Hidden {
		layers = append(layers, nn.NewLinear(g, fmt.Sprintf("hidden%d", i+1), in, h, true,
			nn.WithRand(rng), nn.WithInit(nn.KaimingUniform(nn.GainReLU))))
		layers = append(layers, nn.ReLU{})
		if cfg.Dropout > 0 {
			layers = append(layers, nn.NewDropout(g, fmt.Sprintf("dropout%d", i+1), cfg.Dropout, nn.WithRand(rng)))
		}
		in = h
	}
	layers = append(layers, nn.NewLinear(g, "output", in, classes, true, nn.WithRand(rng)))
	return nn.NewSequential("mlp", layers...)
}

// evaluation computes the test loss and accuracy over the whole test set
// in one run of the evaluation Runner.
type evaluation struct {
	r              *vm.Runner
	test           *data.Loader // the test set in one batch
	x, y           *graph.Node
	logits, losses *graph.Node
}

func (e evaluation) run() (loss, accuracy float64, err error) {
	b, err := e.test.Batch(0)
	if err != nil {
		return 0, 0, err
	}
	if err := e.r.Run(vm.Feeds{e.x: b[0], e.y: b[1]}); err != nil {
		return 0, 0, err
	}
	logits, err := e.r.Value(e.logits)
	if err != nil {
		return 0, 0, err
	}
	losses, err := e.r.Value(e.losses)
	if err != nil {
		return 0, 0, err
	}
	classes, correct := logits.Shape()[1], 0
	for r, label := range b[1].Float64s() {
		loss += losses.Float64s()[r]
		if data.Argmax(logits.Float64s()[r*classes:(r+1)*classes]) == int(label) {
			correct++
		}
	}
	n := float64(b[1].Shape()[0])
	return loss / n, float64(correct) / n, nil
}

// loadData returns the training and test sets cfg names, with features
// "x" (rows × features) and labels "y", and the number of classes.
func loadData(cfg Config) (train, test *data.Tensors, classes int, err error) {
	if cfg.Fashion {
		train, test, err = data.FashionMNIST(cfg.FashionDir)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("mlp: -fashion needs the Fashion-MNIST files: %w", err)
		}
		for _, d := range []*data.Tensors{train, test} {
			x := d.Column("x")
			if err := d.Reshape("x", x.Size()/max(d.Len(), 1)); err != nil { // rows of pixels
				return nil, nil, 0, err
			}
		}
		return train, test, data.FashionMNISTClasses, nil
	}
	path := cfg.Digits
	if path == "" {
		path = findDigits()
	}
	d, err := loadDigits(path)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("mlp: %w (give the file with -digits)", err)
	}
	if !(cfg.TestFraction > 0 && cfg.TestFraction < 1) {
		return nil, nil, 0, fmt.Errorf("mlp: test fraction %v is not in (0, 1)", cfg.TestFraction)
	}
	if train, test, err = d.Split(cfg.TestFraction, cfg.Seed); err != nil {
		return nil, nil, 0, fmt.Errorf("mlp: %w", err)
	}
	return train, test, digitsClasses, nil
}

// findDigits looks for the shipped digits beside the working directory
// (go test), under it (go run from the repository) and beside this source
// file.
func findDigits() string {
	candidates := []string{
		filepath.Join("testdata", "digits.csv.gz"),
		filepath.Join("examples", "mlp", "testdata", "digits.csv.gz"),
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		candidates = append(candidates, filepath.Join(filepath.Dir(file), "testdata", "digits.csv.gz"))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return candidates[0]
}

// errNoPlot is Train's error for a Plot in a build without -tags plot.
var errNoPlot = errors.New("mlp: -plot: this build has no plotting (it keeps gonum.org/v1/plot out of the default build): run it with go run -tags plot ./examples/mlp -plot loss.png")

// writeOutputs writes the checkpoint, plot, graph drawing and profile cfg
// asks for. The drawing shows the training step: the loss and the
// parameters' updates, with each gradient cluster collapsed to a box.
func writeOutputs(cfg Config, rank int, m *vm.Machine, model nn.Module, opt nn.Optimizer, res Result, drawn []*graph.Node, out io.Writer) error {
	if cfg.Profile {
		fmt.Fprintln(out, "profile of the training step, the 10 slowest instructions:")
		if err := m.Profile().WriteTable(out, 10); err != nil {
			return err
		}
	}
	if cfg.Save != "" {
		state := append(nn.StateOf(model), nn.Prefix("optimizer", opt.State())...)
		var err error
		if cfg.Cluster != nil {
			err = cfg.Cluster.Save(cfg.Save, m, state)
		} else {
			err = writeFile(cfg.Save, func(w io.Writer) error { return nn.Save(w, m, state) })
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "saved %d tensors to %s\n", len(state), cfg.Save)
	}
	if rank != 0 {
		return nil // rank 0 plots and draws
	}
	if cfg.Plot != "" {
		if err := plotLosses(cfg.Plot, res); err != nil {
			return err
		}
		fmt.Fprintf(out, "plotted the losses to %s\n", cfg.Plot)
	}
	if cfg.Dot != "" {
		opts := graph.DotOptions{Outputs: drawn, CollapseGradients: true, Title: "MLP training step"}
		if err := writeFile(cfg.Dot, func(w io.Writer) error { return graph.WriteDot(w, drawn[0].Graph(), opts) }); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote the training graph to %s\n", cfg.Dot)
	}
	return nil
}

// writeFile creates path and fills it with write, reporting either's error.
func writeFile(path string, write func(io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("mlp: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("mlp: %w", cerr)
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("mlp: %s: %w", path, err)
	}
	return nil
}
