// Command nabla holds nabla's command-line tools.
//
//	nabla onnx [-dot OUT.dot] [-shape NAME=D1,D2,...]... MODEL.onnx
//
// onnx imports an ONNX model and prints its inputs, outputs, parameters
// and the count of each op type, and writes the imported graph as
// Graphviz DOT (MODEL.dot unless -dot says otherwise).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(args []string, w io.Writer) error {
	if len(args) == 0 || args[0] != "onnx" {
		return fmt.Errorf("usage: nabla onnx [-dot OUT.dot] [-shape NAME=D1,D2,...] MODEL.onnx")
	}
	return onnxCommand(args[1:], w)
}

// shapes is a repeatable -shape flag.
type shapes map[string][]int

func (s shapes) String() string { return fmt.Sprint(map[string][]int(s)) }

func (s shapes) Set(v string) error {
	name, dims, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("want NAME=D1,D2,...")
	}
	var shape []int
	for _, d := range strings.Split(dims, ",") {
		if d == "" {
			continue
		}
		n, err := strconv.Atoi(d)
		if err != nil {
			return err
		}
		shape = append(shape, n)
	}
	s[name] = shape
	return nil
}

func onnxCommand(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("onnx", flag.ContinueOnError)
	dot := fs.String("dot", "", "where to write the graph's DOT (default: the model's path with .dot)")
	in := shapes{}
	fs.Var(in, "shape", "an input's shape, NAME=D1,D2,... (repeatable; required for symbolic dimensions)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: nabla onnx [-dot OUT.dot] [-shape NAME=D1,D2,...] MODEL.onnx")
	}
	path := fs.Arg(0)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	pb := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, pb); err != nil {
		return fmt.Errorf("%s: not an ONNX model: %v", path, err)
	}
	counts := map[string]int{}
	for _, n := range pb.GetGraph().GetNode() {
		counts[n.GetOpType()]++
	}
	fmt.Fprintf(w, "%s: IR version %d, producer %q %s\n", path, pb.GetIrVersion(), pb.GetProducerName(), pb.GetProducerVersion())
	fmt.Fprintf(w, "ops (%d nodes):\n", len(pb.GetGraph().GetNode()))
	ops := make([]string, 0, len(counts))
	for op := range counts {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		fmt.Fprintf(w, "  %-24s %d\n", op, counts[op])
	}
	model, err := onnx.ImportFile(path, onnx.Options{InputShapes: in})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "opset %d\ninputs:\n", model.Opset)
	for i, n := range model.Inputs {
		fmt.Fprintf(w, "  %s %v\n", model.InputNames[i], n.Type())
	}
	fmt.Fprintln(w, "outputs:")
	for i, n := range model.Outputs {
		fmt.Fprintf(w, "  %s %v\n", model.OutputNames[i], n.Type())
	}
	total := 0
	for _, p := range model.Params {
		total += p.Type().Size()
	}
	fmt.Fprintf(w, "parameters: %d tensors, %d values\n", len(model.Params), total)
	if *dot == "" {
		*dot = strings.TrimSuffix(path, ".onnx") + ".dot"
	}
	f, err := os.Create(*dot)
	if err != nil {
		return err
	}
	if err := graph.WriteDot(f, model.Graph, graph.DotOptions{Outputs: model.Outputs, EdgeShapes: true}); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s\n", *dot)
	return nil
}
