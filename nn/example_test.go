package nn_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/vm"
)

// Fit y = 2x + 1 with one Linear layer: one compiled program runs the
// forward pass, the backward pass and the SGD step.
func Example() {
	g := graph.New()
	model := nn.NewLinear(g, "fc", 1, 1, true, nn.WithRand(rand.New(rand.NewPCG(1, 1))))
	x := g.Input("x", graph.Float64, 4, 1)
	y := g.Input("y", graph.Float64, 4, 1)
	loss := nn.MSE(model.Forward(x), y)
	updates, err := nn.TrainingUpdates(nn.NewSGD(nn.SGDConfig{LR: 0.1, Momentum: 0.5}), loss, model)
	if err != nil {
		fmt.Println(err)
		return
	}
	prog, err := compile.Compile([]*graph.Node{loss}, compile.WithUpdates(updates))
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := vm.New(prog)
	if err != nil {
		fmt.Println(err)
		return
	}
	xs, _ := graph.FromFloat64s(graph.Float64, []float64{-1, 0, 1, 2}, 4, 1)
	ys, _ := graph.FromFloat64s(graph.Float64, []float64{-1, 1, 3, 5}, 4, 1)
	for range 200 {
		if err := m.Run(vm.Feeds{x: xs, y: ys}); err != nil {
			fmt.Println(err)
			return
		}
	}
	for _, p := range nn.NamedParameters(model) {
		v, _ := m.Get(p.Node)
		fmt.Printf("%s %.4f\n", p.Name, graph.Float64s(v))
	}
	// Output:
	// weight [2.0000]
	// bias [1.0000]
}

func ExampleFormat() {
	g := graph.New()
	model := nn.NewSequential("mlp",
		nn.NewLinear(g, "fc1", 64, 32, true),
		nn.ReLU{},
		nn.NewDropout(g, "drop", 0.1),
		nn.NewLinear(g, "fc2", 32, 10, true),
	)
	fmt.Println(nn.Format(model))
	for _, p := range nn.NamedParameters(model) {
		fmt.Println(p.Name, p.Node.Type())
	}
	// Output:
	// Sequential(
	//   (fc1): Linear(in_features=64, out_features=32, bias=true)
	//   (1): ReLU()
	//   (drop): Dropout(p=0.1)
	//   (fc2): Linear(in_features=32, out_features=10, bias=true)
	// )
	// fc1.weight float64(32,64)
	// fc1.bias float64(32)
	// fc2.weight float64(10,32)
	// fc2.bias float64(10)
}

// A two-layer LSTM over batch-first sequences: its parameters have
// PyTorch's names and shapes, and Run returns PyTorch's (output, h_n, c_n).
func ExampleNewLSTM() {
	g := graph.New()
	lstm := nn.NewLSTM(g, "lstm", 10, 20, nn.RecurrentConfig{Layers: 2, BatchFirst: true})
	x := g.Input("x", graph.Float64, 3, 7, 10) // 3 sequences of 7 steps
	out, hn, cn := lstm.Run(x, nil, nil)
	fmt.Println(lstm)
	for _, p := range nn.NamedParameters(lstm) {
		fmt.Println(p.Name, p.Node.Type())
	}
	fmt.Println(out.Type(), hn.Type(), cn.Type(), g.Err())
	// Output:
	// LSTM(10, 20, num_layers=2, batch_first=True)
	// weight_ih_l0 float64(80,10)
	// weight_hh_l0 float64(80,20)
	// bias_ih_l0 float64(80)
	// bias_hh_l0 float64(80)
	// weight_ih_l1 float64(80,20)
	// weight_hh_l1 float64(80,20)
	// bias_ih_l1 float64(80)
	// bias_hh_l1 float64(80)
	// float64(3,7,20) float64(2,3,20) float64(2,3,20) <nil>
}
