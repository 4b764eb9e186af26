package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/data"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Config is what to fine-tune and how.
type Config struct {
	Epochs int     // passes over the training rows
	Batch  int     // examples per training step
	LR     float64 // Adam's learning rate
	Seed   uint64  // seeds the shuffles and the HVP's direction

	Model  string // the ONNX model; "" for testdata/cnn.onnx
	Digits string // the UCI digits; "" for examples/mlp's copy
	Out    string // where to write the fine-tuned model; "" for a temporary file
	ORT    string // onnxruntime-node's folder; "" to look in the usual places
}

// DefaultConfig fine-tunes the briefly pre-trained CNN from 73% to about
// 91% test accuracy in a second or two.
func DefaultConfig() Config { return Config{Epochs: 5, Batch: 32, LR: 3e-3, Seed: 1} }

// Result is what a run measured.
type Result struct {
	Tests    int       // test images
	Imported float64   // test accuracy of the imported model
	Logits   []float64 // the imported model's logits of the first 8 test images, 10 a row
	Accuracy []float64 // after each epoch
	Exported string    // the fine-tuned model's file

	ORT        bool    // ONNX Runtime ran the fine-tuned export
	ORTSkipped string  // why it did not, if it did not
	ORTAgree   int     // test images whose class ONNX Runtime and nabla agree on
	ORTMaxDiff float64 // the largest difference of their logits

	HVPNorm   float64 // |H·v|
	Curvature float64 // vᵀ·H·v
	HVPRelErr float64 // |H·v - central differences| / |H·v|
}

// Run imports the model, evaluates, fine-tunes, exports and checks it.
func Run(cfg Config, out io.Writer) (Result, error) {
	if cfg.Epochs < 0 || cfg.Batch <= 0 {
		return Result{}, fmt.Errorf("onnx example: epochs (%d) must not be negative, batch size (%d) must be positive", cfg.Epochs, cfg.Batch)
	}
	train, test, err := loadDigits(cfg.Digits)
	if err != nil {
		return Result{}, err
	}
	path := cfg.Model
	if path == "" {
		path = find("examples", "onnx", "testdata", "cnn.onnx")
	}
	model, err := os.ReadFile(path)
	if err != nil {
		return Result{}, fmt.Errorf("onnx example: %w (give the model with -model)", err)
	}

	// The model is imported twice into one graph: on a training batch
	// and on the whole test set, the second import's initializers bound
	// to the first's parameters. Pixels are scaled inside the program.
	g := graph.New()
	x := g.Input("x", tensor.Float32, cfg.Batch, 1, 8, 8)
	y := g.Input("y", tensor.Int64, cfg.Batch)
	m, err := onnx.Import(model, onnx.Options{Graph: g, Inputs: map[string]*graph.Node{"input": ops.Scale(x, 1.0/16)}})
	if err != nil {
		return Result{}, err
	}
	images := g.Input("images", tensor.Float32, test.Len(), 1, 8, 8)
	bind := map[string]*graph.Node{"input": ops.Scale(images, 1.0/16)}
	for name, p := range m.Params {
		bind[name] = p
	}
	mt, err := onnx.Import(model, onnx.Options{Graph: g, Inputs: bind})
	if err != nil {
		return Result{}, err
	}
	logits := mt.Outputs[0]
	fmt.Fprintf(out, "imported %s: %d parameters and buffers, opset %d, output %v\n", path, len(m.Params), m.Opset, m.Outputs[0].Type())

	// Fine-tuning trains the weights; the batch norms' statistics, which
	// an ONNX file holds as initializers beside the weights, stay.
	var trainable []nn.Named
	for _, s := range m.State() {
		if !strings.HasSuffix(s.Name, "running_mean") && !strings.HasSuffix(s.Name, "running_var") {
			trainable = append(trainable, s)
		}
	}
	loss := nn.CrossEntropy(m.Outputs[0], y)
	opt := nn.NewAdam(nn.AdamConfig{LR: cfg.LR})
	updates, err := opt.Updates(loss, trainable)
	if err != nil {
		return Result{}, err
	}
	trainer, err := machine([]*graph.Node{loss}, updates)
	if err != nil {
		return Result{}, err
	}
	evaluator, err := machine([]*graph.Node{logits}, nil, vm.SharingParams(trainer))
	if err != nil {
		return Result{}, err
	}
	testX, testY := test.Column("x"), test.Column("y").Int64s()
	imagesFeed, err := graph.FromFloat64s(tensor.Float32, graph.Float64s(testX), testX.Shape()...)
	if err != nil {
		return Result{}, err
	}
	evaluate := func() ([]float64, float64, error) {
		if err := evaluator.Run(vm.Feeds{images: imagesFeed}); err != nil {
			return nil, 0, err
		}
		l, err := evaluator.Value(logits)
		if err != nil {
			return nil, 0, err
		}
		scores := graph.Float64s(l)
		return scores, accuracy(scores, testY), nil
	}

	var res Result
	res.Tests = test.Len()
	scores, acc, err := evaluate()
	if err != nil {
		return Result{}, err
	}
	res.Imported, res.Logits = acc, scores[:10*min(8, test.Len())]
	fmt.Fprintf(out, "imported model: test accuracy %.4f on %d images\n", acc, test.Len())

	batches, err := data.NewLoader(train, cfg.Batch, tensor.Float32, tensor.Int64)
	if err != nil {
		return Result{}, err
	}
	for epoch := range cfg.Epochs {
		train.Shuffle(cfg.Seed + uint64(epoch))
		total, steps := 0.0, 0
		for i := range batches.Len() {
			b, err := batches.Batch(i)
			if err != nil {
				return Result{}, err
			}
			if b[0].Shape()[0] != cfg.Batch { // the short last batch: the next epoch's shuffle brings its rows back
				continue
			}
			if err := trainer.Run(vm.Feeds{x: b[0], y: b[1]}); err != nil {
				return Result{}, err
			}
			l, err := trainer.Scalar(loss)
			if err != nil {
				return Result{}, err
			}
			total, steps = total+l, steps+1
		}
		if scores, acc, err = evaluate(); err != nil {
			return Result{}, err
		}
		res.Accuracy = append(res.Accuracy, acc)
		fmt.Fprintf(out, "epoch %d/%d: train loss %.4f, test accuracy %.4f\n", epoch+1, cfg.Epochs, total/float64(max(steps, 1)), acc)
	}

	// Export the fine-tuned model: the test-set graph, with the values
	// the trainer holds.
	res.Exported = cfg.Out
	if res.Exported == "" {
		dir, err := os.MkdirTemp("", "nabla-onnx-example")
		if err != nil {
			return Result{}, err
		}
		defer os.RemoveAll(dir)
		res.Exported = filepath.Join(dir, "tuned.onnx")
	}
	if err := onnx.WriteFile(res.Exported, []*graph.Node{logits}, onnx.ExportOptions{OutputNames: []string{"logits"}, Values: trainer}); err != nil {
		return Result{}, err
	}
	fmt.Fprintf(out, "exported the fine-tuned model to %s\n", res.Exported)
	if err := compareORT(cfg, &res, images.Name(), imagesFeed, scores, out); err != nil {
		return Result{}, err
	}
	if err := hvp(cfg, &res, m, x, y, loss, trainer, test, out); err != nil {
		return Result{}, err
	}
	return res, nil
}

// machine compiles outputs with updates and makes a machine of them.
func machine(outputs []*graph.Node, updates map[*graph.Node]*graph.Node, opts ...vm.Option) (*vm.Machine, error) {
	prog, err := compile.Compile(outputs, compile.WithUpdates(updates))
	if err != nil {
		return nil, err
	}
	return vm.New(prog, opts...)
}

// accuracy is the share of rows of scores (10 a row) whose largest is
// the label's.
func accuracy(scores []float64, labels []int64) float64 {
	correct := 0
	for i, label := range labels {
		if data.Argmax(scores[i*10:(i+1)*10]) == int(label) {
			correct++
		}
	}
	return float64(correct) / float64(len(labels))
}

// hvp computes the Hessian–vector product of the cross-entropy of the
// fine-tuned model on the first test images with respect to the linear
// layer's weight, in a random unit direction v, and checks it against central
// differences of the gradient, (∇L(w + εv) - ∇L(w - εv)) / 2ε.
func hvp(cfg Config, res *Result, m *onnx.Model, x, y, loss *graph.Node, trainer *vm.Machine, test *data.Tensors, out io.Writer) error {
	g := x.Graph()
	w := m.Params["fc.weight"]
	if w == nil {
		return fmt.Errorf("onnx example: the model has no parameter fc.weight")
	}
	// The training graph's own loss, on the first batch of test images.
	loader, err := data.NewLoader(test, cfg.Batch, tensor.Float32, tensor.Int64)
	if err != nil {
		return err
	}
	b, err := loader.Batch(0)
	if err != nil {
		return err
	}
	if b[0].Shape()[0] != cfg.Batch {
		return fmt.Errorf("onnx example: fewer test images than a batch (%d)", cfg.Batch)
	}
	feeds := vm.Feeds{x: b[0], y: b[1]}
	r := rand.New(rand.NewPCG(cfg.Seed, 7))
	vals := make([]float64, w.Type().Size())
	norm := 0.0
	for i := range vals {
		vals[i] = r.NormFloat64()
		norm += vals[i] * vals[i]
	}
	for i := range vals { // a unit vector, so that ε is the step's length
		vals[i] /= math.Sqrt(norm)
	}
	vt, err := graph.FromFloat64s(w.DType(), vals, w.Shape()...)
	if err != nil {
		return err
	}
	hv, err := compile.HVP(loss, w, g.Const(vt))
	if err != nil {
		return err
	}
	grad, err := compile.Grad(loss, w)
	if err != nil {
		return err
	}
	mh, err := machine([]*graph.Node{hv, grad[0]}, nil, vm.SharingParams(trainer))
	if err != nil {
		return err
	}
	w0, err := trainer.Get(w)
	if err != nil {
		return err
	}
	gradAt := func(eps float64) ([]float64, error) {
		shifted := graph.Float64s(w0)
		for i := range shifted {
			shifted[i] += eps * vals[i]
		}
		t, err := graph.FromFloat64s(w.DType(), shifted, w.Shape()...)
		if err == nil {
			err = mh.Set(w, t)
		}
		if err == nil {
			err = mh.Run(feeds)
		}
		if err != nil {
			return nil, err
		}
		gv, err := mh.Value(grad[0])
		return graph.Float64s(gv), err
	}
	const eps = 1e-2
	plus, err := gradAt(eps)
	if err != nil {
		return err
	}
	minus, err := gradAt(-eps)
	if err != nil {
		return err
	}
	if _, err := gradAt(0); err != nil { // back to the fine-tuned weight, and H·v there
		return err
	}
	hvv, err := mh.Value(hv)
	if err != nil {
		return err
	}
	exact := graph.Float64s(hvv)
	var diff, curv float64
	norm = 0
	for i, h := range exact {
		fd := (plus[i] - minus[i]) / (2 * eps)
		diff += (h - fd) * (h - fd)
		norm += h * h
		curv += h * vals[i]
	}
	res.HVPNorm, res.Curvature = math.Sqrt(norm), curv
	res.HVPRelErr = math.Sqrt(diff / norm)
	fmt.Fprintf(out, "Hessian–vector product of the loss w.r.t. fc.weight %v: |H·v| = %.4g, vᵀH·v = %.4g; central differences of the gradient agree to %.1e (relative)\n",
		w.Shape(), res.HVPNorm, res.Curvature, res.HVPRelErr)
	return nil
}
