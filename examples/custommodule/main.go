// Command custommodule trains a classifier built from a module of its own,
// Standardize, which keeps running statistics in buffers, and nn.Linear
// layers built on the custom op nn.LinearFunction (docs/extending.md,
// "Extending nn"). The data are three clusters in two features of wildly
// different scales, which Standardize evens out.
package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/data"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/vm"
)

const (
	batch = 64
	steps = 300
)

func main() {
	if _, err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// newClassifier builds the model: parameters and buffers are made in g.
func newClassifier(g *graph.Graph, rng *rand.Rand) *Classifier {
	return &Classifier{
		norm: NewStandardize(g, "norm", 2, 0.1),
		layers: []nn.Module{
			nn.NewLinear(g, "hidden", 2, 16, true, nn.WithRand(rng)),
			nn.Tanh{},
			nn.NewLinear(g, "out", 16, 3, true, nn.WithRand(rng)),
		},
	}
}

// setup is the model, its training and evaluation passes and their
// machines.
type setup struct {
	model                     *Classifier
	opt                       nn.Optimizer
	x, y, xEval, loss, logits *graph.Node
	train, eval               *vm.Machine
}

func newSetup(rng *rand.Rand) (*setup, error) {
	g := graph.New()
	s := &setup{model: newClassifier(g, rng)}
	s.x = g.Input("x", graph.Float64, batch, 2)
	s.y = g.Input("y", graph.Float64, batch)
	s.xEval = g.Input("x_eval", graph.Float64, batch, 2)

	// One training step: forward, backward, the Adam step and the running
	// statistics' updates, all in one program.
	s.loss = nn.CrossEntropy(s.model.Forward(s.x), s.y)
	s.opt = nn.NewAdam(nn.DefaultAdam().WithLR(0.01))
	updates, err := nn.TrainingUpdates(s.opt, s.loss, s.model)
	if err != nil {
		return nil, err
	}
	trainProg, err := compile.Compile([]*graph.Node{s.loss}, compile.WithUpdates(updates))
	if err != nil {
		return nil, err
	}
	if s.train, err = vm.New(trainProg); err != nil {
		return nil, err
	}

	// Evaluation uses the running statistics, on a machine that shares
	// the training machine's parameters and buffers.
	nn.SetTraining(s.model, false)
	s.logits = s.model.Forward(s.xEval)
	evalProg, err := compile.Compile([]*graph.Node{s.logits})
	if err != nil {
		return nil, err
	}
	s.eval, err = vm.New(evalProg, vm.SharingParams(s.train))
	return s, err
}

// result is what run measured.
type result struct {
	accuracy   float64
	mean       []float64 // the running mean at the end
	state      []string  // the checkpoint's names
	checkpoint []byte
}

func run(out io.Writer) (result, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	s, err := newSetup(rng)
	if err != nil {
		return result{}, err
	}
	fmt.Fprintln(out, nn.Format(s.model))

	xs, ys := graph.NewDense(graph.Float64, batch, 2), graph.NewDense(graph.Float64, batch)
	for step := range steps {
		sample(rng, xs, ys)
		if err := s.train.Run(vm.Feeds{s.x: xs, s.y: ys}); err != nil {
			return result{}, err
		}
		if step%100 == 0 || step == steps-1 {
			l, _ := s.train.Value(s.loss)
			fmt.Fprintf(out, "step %3d: loss %.4f\n", step, l.Float64s()[0])
		}
	}

	var res result
	correct := 0
	for range evalBatches {
		sample(rng, xs, ys)
		if err := s.eval.Run(vm.Feeds{s.xEval: xs}); err != nil {
			return result{}, err
		}
		logits, _ := s.eval.Value(s.logits)
		for i := range batch {
			if data.Argmax(logits.Float64s()[3*i:3*i+3]) == int(ys.Float64s()[i]) {
				correct++
			}
		}
	}
	res.accuracy = float64(correct) / (evalBatches * batch)
	mean, err := s.train.Get(s.model.norm.RunningMean)
	if err != nil {
		return result{}, err
	}
	res.mean = mean.Float64s()

	// The checkpoint holds the parameters, the running statistics and
	// Adam's state.
	state := append(nn.StateOf(s.model), nn.Prefix("optimizer", s.opt.State())...)
	var file bytes.Buffer
	if err := nn.Save(&file, s.train, state); err != nil {
		return result{}, err
	}
	for _, st := range state {
		res.state = append(res.state, st.Name)
	}
	res.checkpoint = file.Bytes()
	fmt.Fprintf(out, "running mean %.2f; the data's is %.2f\n", res.mean, dataMean)
	var buffers []string
	for _, b := range nn.NamedBuffers(s.model) {
		buffers = append(buffers, b.Name)
	}
	fmt.Fprintf(out, "saved %d tensors (%d bytes); the model's buffers: %v\n", len(state), file.Len(), buffers)
	fmt.Fprintf(out, "accuracy: %.4f\n", res.accuracy)
	return res, nil
}

// The data: class k's points lie around centre k, with deviation spread
// in each feature, then each feature is scaled and shifted.
var (
	centres  = [3][2]float64{{0, 0}, {1, 0}, {0, 1}}
	scale    = [2]float64{100, 0.1}
	shift    = [2]float64{100, 50}
	dataMean = [2]float64{scale[0]/3 + shift[0], scale[1]/3 + shift[1]} // the centres' mean is (1/3, 1/3)
)

const (
	spread      = 0.25
	evalBatches = 10
)

// sample draws a batch of points and their classes into xs and ys.
func sample(rng *rand.Rand, xs, ys *tensor.Dense) {
	x, y := xs.Float64s(), ys.Float64s()
	for i := range y {
		k := rng.IntN(3)
		y[i] = float64(k)
		for j := range 2 {
			x[2*i+j] = (centres[k][j]+spread*rng.NormFloat64())*scale[j] + shift[j]
		}
	}
}
