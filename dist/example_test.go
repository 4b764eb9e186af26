package dist_test

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/data"
	"github.com/nabla-go/nabla/dist"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/vm"
)

// Data-parallel training: the same program on every process mpirun
// starts, each on its share of every batch of 8 rows. Run without a
// launcher, as here, it is rank 0 of 1 and trains alone.
func ExampleDataParallel() {
	comm, err := dist.Init()
	if err != nil {
		fmt.Println(err)
		return
	}
	const global = 8
	local := global / comm.Size()

	// y = 2x - 1 on 64 rows.
	xs, ys := make([]float64, 64), make([]float64, 64)
	for i := range xs {
		xs[i] = float64(i)/32 - 1
		ys[i] = 2*xs[i] - 1
	}
	set, _ := data.NewTensors(
		data.Column{Name: "x", Data: tensor.New(tensor.WithShape(64, 1), tensor.WithBacking(xs))},
		data.Column{Name: "y", Data: tensor.New(tensor.WithShape(64, 1), tensor.WithBacking(ys))})

	g := graph.New()
	model := nn.NewLinear(g, "fit", 1, 1, true)
	x := g.Input("x", graph.Float64, local, 1)
	y := g.Input("y", graph.Float64, local, 1)
	loss := nn.MSE(model.Forward(x), y)
	updates, err := nn.TrainingUpdates(nn.NewSGD(nn.SGDConfig{LR: 0.2}), loss, model, dist.DataParallel(comm))
	if err != nil {
		fmt.Println(err)
		return
	}
	prog, _ := compile.Compile([]*graph.Node{loss}, compile.WithUpdates(updates))
	m, _ := vm.New(prog)
	if err := comm.BroadcastState(m, nn.StateOf(model), 0); err != nil {
		fmt.Println(err)
		return
	}
	batches, _ := data.NewLoader(set, local)
	if err := batches.Shard(comm.Rank(), comm.Size()); err != nil {
		fmt.Println(err)
		return
	}
	for range 50 {
		for i := range batches.Len() {
			b, _ := batches.Batch(i)
			if err := m.Run(vm.Feeds{x: b[0], y: b[1]}); err != nil {
				fmt.Println(err)
				return
			}
		}
	}
	w, _ := m.Value(model.Weight)
	b, _ := m.Value(model.Bias)
	if comm.Rank() == 0 {
		fmt.Printf("%v: y = %.3f·x %+.3f\n", comm, w.Float64s()[0], b.Float64s()[0])
	}
	// Output: rank 0 of 1: y = 2.000·x -1.000
}
