package dist

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
)

func TestZZDump(t *testing.T) {
	c := &Comm{size: 2, timeout: DefaultTimeout}
	g := graph.New()
	rng := rand.New(rand.NewPCG(1, 3))
	sizes := []int{784, 256, 256, 10}
	var layers []nn.Module
	for i := 1; i < len(sizes); i++ {
		layers = append(layers, nn.NewLinear(g, fmt.Sprintf("l%d", i), sizes[i-1], sizes[i], true, nn.WithRand(rng), nn.WithDType(tensor.Float32)))
		if i < len(sizes)-1 {
			layers = append(layers, nn.Tanh{})
		}
	}
	model := nn.NewSequential("w1", layers...)
	const batch = 64
	x := g.Input("x", tensor.Float32, batch, sizes[0])
	y := g.Input("y", tensor.Float32, batch)
	loss := nn.CrossEntropy(model.Forward(x), y)
	updates, _ := nn.TrainingUpdates(nn.NewSGD(nn.SGDConfig{LR: 0.01}), loss, model, DataParallel(c))
	p, err := compile.Compile([]*graph.Node{loss}, compile.WithUpdates(updates))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(p.String())
}
