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

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/data"
	"github.com/nabla-go/nabla/distributions"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Config is what to train and how.
type Config struct {
	Epochs int     // passes over the training set
	Batch  int     // examples per training step (a shorter last batch is skipped)
	LR     float64 // Adam's learning rate
	Hidden int     // units of the encoder's and the decoder's hidden layer
	Latent int     // dimensions of the latent code
	Seed   uint64  // seeds the split, the shuffles, the initial weights and the draws

	// Digits is the UCI digits file; "" finds the mlp example's
	// testdata/digits.csv.gz.
	Digits string
	// TestFraction of the digits is held out to measure the ELBO.
	TestFraction float64
	// Samples writes a grid of digits decoded from prior draws here (PNG).
	Samples string
}

// DefaultConfig is the configuration the command's flags start from.
func DefaultConfig() Config {
	return Config{Epochs: 30, Batch: 64, LR: 2e-3, Hidden: 32, Latent: 8, Seed: 1, TestFraction: 0.2}
}

// Result is what a training run measured.
type Result struct {
	TrainELBO []float64 // mean ELBO per digit of each epoch's training batches (nats)
	TestELBO  []float64 // mean ELBO per held-out digit after each epoch (nats)
	Samples   []float64 // the sampled digits' pixel means, 64 images of 8×8
	Duration  time.Duration
}

// VAE is a variational autoencoder of 8×8 digits: an encoder from pixels
// to the mean and log-scale of a diagonal normal q(z|x), and a decoder
// from a code z to the logits of independent Bernoulli pixels p(x|z), with
// the standard normal prior p(z).
type VAE struct {
	Encoder, Mean, LogScale *nn.Linear
	Decoder, Output         *nn.Linear
	gen                     *ops.Generator
}

// newVAE makes the model's layers, initialised from one generator seeded
// with cfg.Seed, and the generator of its draws.
func newVAE(g *graph.Graph, cfg Config) *VAE {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0))
	lin := func(name string, in, out int) *nn.Linear {
		return nn.NewLinear(g, name, in, out, true, nn.WithRand(rng))
	}
	return &VAE{
		Encoder:  lin("encoder", digitsPixels, cfg.Hidden),
		Mean:     lin("mean", cfg.Hidden, cfg.Latent),
		LogScale: lin("log_scale", cfg.Hidden, cfg.Latent),
		Decoder:  lin("decoder", cfg.Latent, cfg.Hidden),
		Output:   lin("output", cfg.Hidden, digitsPixels),
		gen:      ops.NewGenerator(g, "rng", cfg.Seed),
	}
}

// Forward returns the ELBO of each digit of x (N, 64), one sample of the
// code each: log p(x|z) − KL(q(z|x)‖p(z)) with z = μ + σ·ε drawn from
// q(z|x), the KL in closed form.
func (m *VAE) Forward(x *graph.Node) *graph.Node {
	h := ops.Tanh(m.Encoder.Forward(x))
	q := distributions.NewNormal(m.Mean.Forward(h), ops.Exp(m.LogScale.Forward(h)))
	z := q.RSample(m.gen)
	prior := distributions.NewNormal(x.Graph().Scalar(0, x.DType()), x.Graph().Scalar(1, x.DType()))
	kl := ops.Sum(distributions.KL(q, prior), 1)
	recon := nn.BCEWithLogitsLoss(m.decode(z), x, nn.WithReduction(nn.ReduceNone))
	return ops.Neg(ops.Add(ops.Sum(recon, 1), kl))
}

// decode returns the pixels' logits for codes z.
func (m *VAE) decode(z *graph.Node) *graph.Node {
	return m.Output.Forward(ops.Tanh(m.Decoder.Forward(z)))
}

// Train trains a VAE on the digits as cfg says, reporting each epoch to
// out. The training step (ELBO, gradients, Adam and the generator's step)
// is one program; the held-out ELBO and the samples are two more, sharing
// its parameters and generator.
func Train(cfg Config, out io.Writer) (Result, error) {
	start := time.Now()
	if cfg.Epochs <= 0 || cfg.Batch <= 0 || cfg.Hidden <= 0 || cfg.Latent <= 0 {
		return Result{}, fmt.Errorf("vae: epochs (%d), batch size (%d), hidden (%d) and latent (%d) sizes must be positive",
			cfg.Epochs, cfg.Batch, cfg.Hidden, cfg.Latent)
	}
	train, test, err := loadData(cfg)
	if err != nil {
		return Result{}, err
	}
	if train.Len() < cfg.Batch {
		return Result{}, fmt.Errorf("vae: %d training examples, fewer than a batch of %d", train.Len(), cfg.Batch)
	}
	fmt.Fprintf(out, "%d training and %d held-out digits\n", train.Len(), test.Len())

	g := graph.New()
	model := newVAE(g, cfg)
	x := g.Input("x", tensor.Float64, cfg.Batch, digitsPixels)
	loss := ops.Neg(ops.Mean(model.Forward(x)))
	opt := nn.NewAdam(nn.DefaultAdam().WithLR(cfg.LR))
	updates, err := nn.TrainingUpdates(opt, loss, model)
	if err != nil {
		return Result{}, err
	}
	xTest := g.Input("x_test", tensor.Float64, test.Len(), digitsPixels)
	testELBO := ops.Mean(model.Forward(xTest))
	samples := ops.Sigmoid(model.decode(model.gen.Normal(tensor.Float64, 64, cfg.Latent)))
	// Every program advances the generator, so no two runs share draws.
	for p, u := range model.gen.Updates() {
		updates[p] = u
	}
	trainer, err := machine([]*graph.Node{loss}, updates)
	if err != nil {
		return Result{}, err
	}
	shared := vm.SharingParams(trainer)
	evaluator, err := machine([]*graph.Node{testELBO}, model.gen.Updates(), shared)
	if err != nil {
		return Result{}, err
	}
	sampler, err := machine([]*graph.Node{samples}, model.gen.Updates(), shared)
	if err != nil {
		return Result{}, err
	}

	batches, err := data.NewLoader(train, cfg.Batch)
	if err != nil {
		return Result{}, err
	}
	held, err := data.NewLoader(test, test.Len())
	if err != nil {
		return Result{}, err
	}
	heldOut, err := held.Batch(0)
	if err != nil {
		return Result{}, err
	}
	var res Result
	for epoch := range cfg.Epochs {
		train.Shuffle(cfg.Seed + uint64(epoch) + 1)
		steps := train.Len() / cfg.Batch
		bar := data.NewProgress(out, steps*cfg.Batch, fmt.Sprintf("epoch %d/%d", epoch+1, cfg.Epochs))
		for i := range steps {
			b, err := batches.Batch(i)
			if err != nil {
				return Result{}, err
			}
			if err := trainer.Run(vm.Feeds{x: b[0]}); err != nil {
				return Result{}, err
			}
			l, err := trainer.Scalar(loss)
			if err != nil {
				return Result{}, err
			}
			bar.Add(cfg.Batch, l)
		}
		if err := evaluator.Run(vm.Feeds{xTest: heldOut[0]}); err != nil {
			return Result{}, err
		}
		e, err := evaluator.Scalar(testELBO)
		if err != nil {
			return Result{}, err
		}
		res.TrainELBO = append(res.TrainELBO, -bar.Loss())
		res.TestELBO = append(res.TestELBO, e)
		bar.Finish(fmt.Sprintf("train ELBO %.4f, held-out ELBO %.4f nats per digit", -bar.Loss(), e))
	}
	if err := sampler.Run(nil); err != nil {
		return Result{}, err
	}
	v, err := sampler.Value(samples)
	if err != nil {
		return Result{}, err
	}
	res.Samples = append([]float64(nil), v.Float64s()...)
	if cfg.Samples != "" {
		if err := writeGrid(cfg.Samples, res.Samples); err != nil {
			return Result{}, err
		}
		fmt.Fprintf(out, "wrote 64 sampled digits to %s\n", cfg.Samples)
	}
	res.Duration = time.Since(start)
	fmt.Fprintf(out, "held-out ELBO: %.4f nats per digit\n", res.TestELBO[len(res.TestELBO)-1])
	return res, nil
}

// machine compiles outputs with updates and makes their machine.
func machine(outputs []*graph.Node, updates map[*graph.Node]*graph.Node, opts ...vm.Option) (*vm.Machine, error) {
	p, err := compile.Compile(outputs, compile.WithUpdates(updates))
	if err != nil {
		return nil, err
	}
	return vm.New(p, opts...)
}

// The UCI handwritten digits: 8×8 images with pixels 0..16.
const (
	digitsPixels   = 64
	digitsMaxPixel = 16
)

// loadData reads the digits (pixels scaled to [0, 1], labels dropped) and
// splits them into a training and a held-out set.
func loadData(cfg Config) (train, test *data.Tensors, err error) {
	path := cfg.Digits
	if path == "" {
		path = findDigits()
	}
	d, err := data.ReadCSV(path, data.CSVOptions{Label: -1})
	if err != nil {
		return nil, nil, fmt.Errorf("vae: %w (give the file with -digits)", err)
	}
	x := d.Column("x")
	if n := x.Shape()[1]; n != digitsPixels {
		return nil, nil, fmt.Errorf("vae: %s: %d pixels per line, want %d", path, n, digitsPixels)
	}
	pixels := x.Float64s()
	for i, v := range pixels {
		if !(v >= 0 && v <= digitsMaxPixel) {
			return nil, nil, fmt.Errorf("vae: %s: line %d: pixel %d is %v, want a number in 0..%d", path, i/digitsPixels+1, i%digitsPixels+1, v, digitsMaxPixel)
		}
		pixels[i] = v / digitsMaxPixel
	}
	if !(cfg.TestFraction > 0 && cfg.TestFraction < 1) {
		return nil, nil, fmt.Errorf("vae: test fraction %v is not in (0, 1)", cfg.TestFraction)
	}
	if train, test, err = d.Split(cfg.TestFraction, cfg.Seed); err != nil {
		return nil, nil, fmt.Errorf("vae: %w", err)
	}
	return train, test, nil
}

// findDigits looks for the mlp example's digits from the example's folder
// (go test), the repository's root (go run) and this source file's folder.
func findDigits() string {
	rel := filepath.Join("mlp", "testdata", "digits.csv.gz")
	candidates := []string{filepath.Join("..", rel), filepath.Join("examples", rel)}
	if _, file, _, ok := runtime.Caller(0); ok {
		candidates = append(candidates, filepath.Join(filepath.Dir(file), "..", rel))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return candidates[0]
}
