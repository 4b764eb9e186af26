// Command dot draws the training graph of a small multilayer perceptron
// with Graphviz: the forward pass, its loss, the gradients that compile.Grad
// appends, and the SGD updates built from them.
//
//	go run ./examples/dot > mlp.dot             # the graph, as DOT
//	go run ./examples/dot -svg mlp.svg          # rendered by Graphviz's dot
//	go run ./examples/dot -compiled > prog.dot  # the compiled program
//	go run ./examples/dot -collapse -shapes     # gradients as one box, shapes on edges
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func main() { os.Exit(command(os.Args[1:], os.Stdout, os.Stderr)) }

// usageError is a mistake on the command line, which the flag package
// has reported with the usage.
type usageError struct{ error }

// command runs the command and returns its exit code, as Go's commands
// do: 0 for success and for -h (after the usage), 2 for a mistake on the
// command line, 1 for a failure.
func command(args []string, stdout, stderr io.Writer) int {
	err := run(args, stdout, stderr)
	var usage usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		return 2
	}
	fmt.Fprintln(stderr, "dot:", err)
	return 1
}

// run parses the command line, builds the model and writes the DOT to
// stdout or, with -svg, renders it to a file; flag errors, the usage and
// Graphviz's complaints go to stderr.
func run(args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("dot", flag.ContinueOnError)
	flags.SetOutput(stderr)
	svg := flags.String("svg", "", "render to this SVG `file` with Graphviz's dot instead of writing DOT")
	compiled := flags.Bool("compiled", false, "draw the compiled program (instructions over slots) instead of the graph")
	collapse := flags.Bool("collapse", false, "draw each gradient cluster as one box")
	shapes := flags.Bool("shapes", false, "label edges with the shapes they carry")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "dot: unexpected arguments %q\n", flags.Args())
		flags.Usage()
		return usageError{fmt.Errorf("unexpected arguments %q", flags.Args())}
	}
	var dotPath string
	if *svg != "" {
		var err error
		if dotPath, err = exec.LookPath("dot"); err != nil {
			return errors.New("-svg needs Graphviz's dot command, which is not on PATH: install Graphviz (apt-get install graphviz, brew install graphviz) or write DOT without -svg")
		}
	}

	m, err := buildMLP()
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if *compiled {
		var prog *compile.Program
		prog, err = compile.Compile([]*graph.Node{m.loss}, compile.WithUpdates(m.updates))
		if err == nil {
			err = compile.WriteDot(&out, prog)
		}
	} else {
		outputs := []*graph.Node{m.loss}
		for _, p := range m.params {
			outputs = append(outputs, m.updates[p])
		}
		err = graph.WriteDot(&out, m.g, graph.DotOptions{
			Outputs:           outputs,
			EdgeShapes:        *shapes,
			CollapseGradients: *collapse,
			Title:             "MLP 4-16-3: forward, ∇ and SGD step",
		})
	}
	if err != nil {
		return err
	}
	if dotPath == "" {
		_, err = stdout.Write(out.Bytes())
		return err
	}
	cmd := exec.Command(dotPath, "-Tsvg", "-o", *svg)
	cmd.Stdin = &out
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("dot -Tsvg: %v", err)
	}
	return nil
}

// mlp is the training graph: loss, parameters and their SGD updates.
type mlp struct {
	g       *graph.Graph
	loss    *graph.Node
	params  []*graph.Node
	updates map[*graph.Node]*graph.Node
}

const (
	batch, features, hidden, classes = 8, 4, 16, 3
	learningRate                     = 0.1
)

// buildMLP builds logits = tanh(x·W1 + b1)·W2 + b2, the mean cross-entropy
// against integer labels, its gradients with respect to every parameter,
// and the updates p ← p - lr·∂loss/∂p.
func buildMLP() (*mlp, error) {
	g := graph.New()
	rng := rand.New(rand.NewPCG(1, 1))
	x := g.Input("x", graph.Float64, batch, features)
	labels := g.Input("labels", graph.Float64, batch)

	layer := func(name string, in *graph.Node, fanIn, fanOut int) (*graph.Node, []*graph.Node) {
		defer g.Scope(name)()
		W := g.Param(name+".W", initial(rng, fanIn, fanOut))
		b := g.Param(name+".b", graph.NewDense(graph.Float64, fanOut))
		return ops.Add(ops.MatMul(in, W), b), []*graph.Node{W, b}
	}
	h, params := layer("layer1", x, features, hidden)
	h = ops.Tanh(h).SetName("h")
	logits, more := layer("layer2", h, hidden, classes)
	params = append(params, more...)
	logits.SetName("logits")
	loss := ops.Mean(ops.CrossEntropy(logits, labels)).SetName("loss")

	grads, err := compile.Grad(loss, params...)
	if err != nil {
		return nil, err
	}
	end := g.Scope("sgd")
	updates := map[*graph.Node]*graph.Node{}
	for i, p := range params {
		updates[p] = ops.Sub(p, ops.Scale(grads[i], learningRate)).SetName(p.Name() + "'")
	}
	end()
	if err := g.Err(); err != nil {
		return nil, err
	}
	return &mlp{g: g, loss: loss, params: params, updates: updates}, nil
}

// initial draws a (fanIn, fanOut) weight matrix uniformly in ±1/√fanIn.
func initial(rng *rand.Rand, fanIn, fanOut int) *tensor.Dense {
	limit := 1 / math.Sqrt(float64(fanIn))
	w := graph.NewDense(graph.Float64, fanIn, fanOut)
	for i := range fanIn * fanOut {
		graph.SetFloat(w, i, (2*rng.Float64()-1)*limit)
	}
	return w
}
