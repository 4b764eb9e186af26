package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
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
	Steps     int     // training steps
	Batch     int     // windows per step
	Context   int     // characters per window: the longest context the model sees
	Embed     int     // width of the residual stream
	Heads     int     // attention heads per block
	Layers    int     // transformer blocks
	FF        int     // width of each block's feed-forward layer
	Dropout   float64 // drop probability in the blocks (0: none)
	LR        float64 // Adam's peak learning rate (cosine schedule after a warm-up)
	EvalEvery int     // steps between validation passes
	Seed      uint64  // seeds the initial weights, the windows, dropout and the sample

	Sinusoidal bool // fixed sinusoidal positions instead of learned ones

	Text        string  // the text file; "" for testdata/shakespeare.txt
	ValFraction float64 // the text's last part held out for validation

	SampleChars int     // characters to sample after training (0: none)
	Temperature float64 // of the sampling (≤ 0: the likeliest character each time)
	Prompt      string  // the sample's start; "" for the validation text's first line

	// Profile times each instruction of the training program and prints
	// the slowest after training.
	Profile bool
}

// DefaultConfig is the configuration the command's flags start from: a
// 2-layer model of width 64 that reaches 2.24 bits per character on the
// validation text in a few minutes on two cores.
func DefaultConfig() Config {
	return Config{
		Steps: 1500, Batch: 32, Context: 64,
		Embed: 64, Heads: 4, Layers: 2, FF: 256,
		LR: 3e-3, EvalEvery: 250, Seed: 1,
		ValFraction: 0.1,
		SampleChars: 400, Temperature: 0.8,
	}
}

// Result is what a training run measured.
type Result struct {
	TrainLoss  []float64 // mean training loss (nats per character) of each evaluation interval
	InitialBPC float64   // validation bits per character before training
	ValBPC     []float64 // validation bits per character after each interval
	BPC        float64   // the final validation bits per character
	Vocab      []rune    // the characters the model knows
	Sample     string    // the sampled continuation
	Duration   time.Duration
}

// Train trains the model as cfg says, reporting each evaluation interval
// to out, and returns what it measured. The training step (forward,
// backward, clipping and Adam) is one program kept by a vm.Runner; the
// validation pass (dropout off) and the sampler are two more Runners
// sharing its parameters.
func Train(cfg Config, out io.Writer) (Result, error) {
	start := time.Now()
	if err := cfg.check(); err != nil {
		return Result{}, err
	}
	path := cfg.Text
	if path == "" {
		path = findText()
	}
	text, err := readCorpus(path, cfg.ValFraction)
	if err != nil {
		return Result{}, err
	}
	fmt.Fprintf(out, "%s: %d training and %d validation characters, a vocabulary of %d\n",
		path, len(text.train), len(text.val), len(text.vocab))

	rng := rand.New(rand.NewPCG(cfg.Seed, 0))
	var trainOpts []vm.Option
	if cfg.Profile {
		trainOpts = append(trainOpts, vm.WithProfile())
	}
	step, err := newTrainingStep(cfg, len(text.vocab), rng, trainOpts...)
	if err != nil {
		return Result{}, err
	}
	g, model, x, y, loss, opt, trainer := step.g, step.model, step.x, step.y, step.loss, step.opt, step.runner
	params := 0
	for _, p := range nn.Parameters(model) {
		params += graph.ShapeSize(p.Shape())
	}
	fmt.Fprintf(out, "model (%d parameters):\n%v\n", params, model)

	nn.SetTraining(model, false)
	nats := ops.Sum(ops.CrossEntropy(model.Forward(x), ops.Reshape(y, -1)))
	evaluator, err := vm.NewRunner([]*graph.Node{nats}, nil, nil, vm.SharingParams(trainer.Machine()))
	if err != nil {
		return Result{}, err
	}
	res := Result{Vocab: text.vocab}
	val := validation{r: evaluator, x: x, y: y, nats: nats, text: text.val, context: cfg.Context}

	batch, err := newWindows(text.train, cfg.Batch, cfg.Context)
	if err != nil {
		return Result{}, err
	}
	if res.InitialBPC, err = val.bitsPerChar(); err != nil {
		return Result{}, err
	}
	fmt.Fprintf(out, "before training: validation %.3f bits/char (uniform guessing: %.3f)\n", res.InitialBPC, math.Log2(float64(len(text.vocab))))
	schedule := nn.CosineLR{Base: cfg.LR, Min: cfg.LR / 10, Warmup: min(100, cfg.Steps/10), Total: cfg.Steps}
	chars := cfg.Batch * cfg.Context
	for from := 0; from < cfg.Steps; from += cfg.EvalEvery {
		to := min(from+cfg.EvalEvery, cfg.Steps)
		bar := data.NewProgress(out, (to-from)*chars, fmt.Sprintf("steps %d-%d/%d", from+1, to, cfg.Steps))
		for step := from; step < to; step++ {
			if err := nn.Apply(schedule, opt, trainer.Machine(), step); err != nil {
				return Result{}, err
			}
			batch.random(rng)
			if err := trainer.Run(vm.Feeds{x: batch.x, y: batch.y}); err != nil {
				return Result{}, err
			}
			l, err := trainer.Scalar(loss)
			if err != nil {
				return Result{}, err
			}
			bar.Add(chars, l)
		}
		bpc, err := val.bitsPerChar()
		if err != nil {
			return Result{}, err
		}
		res.TrainLoss = append(res.TrainLoss, bar.Loss())
		res.ValBPC = append(res.ValBPC, bpc)
		bar.Finish(fmt.Sprintf("train loss %.4f (%.3f bits/char), validation %.3f bits/char, %.0f chars/s",
			bar.Loss(), bar.Loss()/math.Ln2, bpc, bar.Throughput()))
	}
	res.BPC = res.ValBPC[len(res.ValBPC)-1]
	fmt.Fprintf(out, "validation: %.3f bits per character\n", res.BPC)
	if cfg.Profile {
		fmt.Fprintln(out, "profile of the training step, the 10 slowest instructions:")
		if err := trainer.Machine().Profile().WriteTable(out, 10); err != nil {
			return Result{}, err
		}
	}

	if cfg.SampleChars > 0 {
		if res.Sample, err = sample(cfg, g, model, trainer.Machine(), text); err != nil {
			return Result{}, err
		}
		fmt.Fprintf(out, "sample (temperature %v, seed %d):\n%s\n", cfg.Temperature, cfg.Seed, res.Sample)
	}
	res.Duration = time.Since(start)
	fmt.Fprintf(out, "trained in %v\n", res.Duration.Round(time.Second))
	return res, nil
}

// trainingStep is the training step's program: forward, cross-entropy
// loss, backward, gradient clipping (max norm 1) and Adam, kept by a
// vm.Runner, with the model in training mode.
type trainingStep struct {
	g          *graph.Graph
	model      *Model
	x, y, loss *graph.Node // x and y: (batch, context) character indices
	opt        *nn.Adam
	runner     *vm.Runner
}

// newTrainingStep builds the model cfg describes over a vocabulary of
// vocab characters, initialised from rng, and its training step on a
// machine with opts.
func newTrainingStep(cfg Config, vocab int, rng *rand.Rand, opts ...vm.Option) (*trainingStep, error) {
	g := graph.New()
	model, err := NewModel(g, ModelConfig{
		Vocab: vocab, Context: cfg.Context, Embed: cfg.Embed, Heads: cfg.Heads,
		Layers: cfg.Layers, FF: cfg.FF, Dropout: cfg.Dropout, Sinusoidal: cfg.Sinusoidal,
		DType: graph.Float32,
	}, rng)
	if err != nil {
		return nil, err
	}
	s := &trainingStep{g: g, model: model}
	s.x = g.Input("x", tensor.Int64, cfg.Batch, cfg.Context)
	s.y = g.Input("y", tensor.Int64, cfg.Batch, cfg.Context)
	nn.SetTraining(model, true)
	s.loss = nn.CrossEntropy(model.Forward(s.x), ops.Reshape(s.y, -1))
	adam := nn.DefaultAdam().WithLR(cfg.LR)
	adam.Clip.MaxNorm = 1
	s.opt = nn.NewAdam(adam)
	s.runner, err = vm.NewRunner([]*graph.Node{s.loss}, nil, func(outs []*graph.Node) (map[*graph.Node]*graph.Node, error) {
		return nn.TrainingUpdates(s.opt, outs[0], model)
	}, opts...)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// check reports the first setting that cannot train.
func (cfg Config) check() error {
	switch {
	case cfg.Steps <= 0 || cfg.Batch <= 0 || cfg.EvalEvery <= 0:
		return fmt.Errorf("charlm: steps (%d), batch size (%d) and evaluation interval (%d) must be positive", cfg.Steps, cfg.Batch, cfg.EvalEvery)
	case cfg.Context <= 0:
		return fmt.Errorf("charlm: the context (%d) must be positive", cfg.Context)
	case !(cfg.Dropout >= 0 && cfg.Dropout < 1):
		return fmt.Errorf("charlm: the dropout probability %v is not in [0, 1)", cfg.Dropout)
	case !(cfg.LR > 0):
		return fmt.Errorf("charlm: the learning rate %v must be positive", cfg.LR)
	}
	return nil
}

// sample builds the sampler (the model on one window, dropout off) and
// draws cfg.SampleChars characters after the prompt, returned with it.
func sample(cfg Config, g *graph.Graph, model *Model, params *vm.Machine, text *corpus) (string, error) {
	nn.SetTraining(model, false)
	x := g.Input("prompt", tensor.Int64, 1, cfg.Context)
	last := ops.Slice(model.Forward(x), 0, cfg.Context-1, cfg.Context)
	r, err := vm.NewRunner([]*graph.Node{last}, nil, nil, vm.SharingParams(params))
	if err != nil {
		return "", err
	}
	prompt := cfg.Prompt
	if prompt == "" {
		prompt = firstLine(text.decode(text.val))
	}
	s := sampler{r: r, x: x, last: last, c: text}
	cont, err := s.continuation(prompt, cfg.SampleChars, cfg.Temperature, cfg.Seed)
	return prompt + cont, err
}

// firstLine is the first whole line of text that begins a speech (follows
// an empty line), with its newline, or the text's start when none does.
func firstLine(text string) string {
	if i := strings.Index(text, "\n\n"); i >= 0 {
		text = text[i+2:]
	}
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		return text[:i+1]
	}
	return text
}

// validation measures the model's cross-entropy on the whole validation
// text, cut into windows without overlap and run 64 at a time.
type validation struct {
	r             *vm.Runner
	x, y, nats    *graph.Node
	text          []int64
	context       int
	full, partial *windows
}

// bitsPerChar is the mean cross-entropy of the validation text's
// characters given the preceding ones of their window, in bits.
func (v *validation) bitsPerChar() (float64, error) {
	const rows = 64
	if v.full == nil {
		var err error
		if v.full, err = newWindows(v.text, rows, v.context); err != nil {
			return 0, err
		}
		if rest := v.full.count() % rows; rest > 0 {
			v.partial, _ = newWindows(v.text, rest, v.context)
		}
	}
	var total float64
	count := v.full.count()
	for first := 0; first < count; first += rows {
		w := v.full
		if count-first < rows {
			w = v.partial
		}
		w.sequential(first)
		if err := v.r.Run(vm.Feeds{v.x: w.x, v.y: w.y}); err != nil {
			return 0, err
		}
		n, err := v.r.Scalar(v.nats)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total / float64(count*v.context) / math.Ln2, nil
}
