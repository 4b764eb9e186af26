package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/conv"
	"github.com/nabla-go/nabla/internal/kernel/parallel"
)

// tapsCases run by taps: LeNet's two convolutions, and odd shapes with
// padding on some sides only, dilation, groups, output channels that fill
// no block of six, output planes that fill no block of 64 positions,
// padding wider than a kernel's reach (taps that read nothing) and
// batches smaller than the threads (units of one block of channels).
var tapsCases = []struct {
	o      ConvOptions
	xs, ws []int
}{
	{ConvOptions{}, []int{5, 1, 28, 28}, []int{6, 1, 5, 5}},
	{ConvOptions{}, []int{4, 6, 12, 12}, []int{16, 6, 5, 5}},
	{ConvOptions{Padding: []int{1, 0, 2, 1}}, []int{3, 5, 9, 13}, []int{7, 5, 3, 4}},
	{ConvOptions{Dilation: []int{2, 3}, Padding: []int{2}}, []int{2, 3, 11, 10}, []int{13, 3, 3, 2}},
	{ConvOptions{Groups: 3, Padding: []int{0, 1}}, []int{1, 6, 7, 9}, []int{9, 2, 2, 3}},
	{ConvOptions{Padding: []int{3, 3, 4, 4}}, []int{2, 2, 2, 3}, []int{5, 2, 3, 3}},
	{ConvOptions{Same: true}, []int{1, 16, 17, 17}, []int{32, 16, 3, 3}},
}

// TestConvTapsAgreesWithDefinition checks the forward convolution by taps
// (conv_taps.go) against the definition, in float32 and float64, on one
// thread and on three; each case must take that path.
func TestConvTapsAgreesWithDefinition(t *testing.T) {
	if !conv.Available() {
		t.Skip("the taps kernels do not run on this processor")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	pool := parallel.New(3)
	defer pool.Close()
	for _, c := range tapsCases {
		geo, err := newConv2d(c.o, false).newGeom(c.xs, c.ws)
		if err != nil {
			t.Fatal(err)
		}
		if geo.forwardPath() != pathTaps {
			t.Fatalf("x%v w%v %+v: path %d, want by taps", c.xs, c.ws, c.o, geo.forwardPath())
		}
		x, w := randoms(rng, graph.ShapeSize(c.xs)), randoms(rng, graph.ShapeSize(c.ws))
		want := naiveConv(geo, x, w)
		x32, w32 := make([]float32, len(x)), make([]float32, len(w))
		for i := range x {
			x32[i] = float32(x[i])
		}
		for i := range w {
			w32[i] = float32(w[i])
		}
		for _, e := range []*graph.Exec{nil, graph.NewExec(pool)} {
			y := make([]float64, len(want))
			y32 := make([]float32, len(want))
			for i := range y {
				y[i], y32[i] = math.NaN(), float32(math.NaN())
			}
			runConv(e, convForward, geo, x, w, y)
			runConv(e, convForward, geo, x32, w32, y32)
			for i := range y {
				if math.Abs(y[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) || y[i] != y[i] {
					t.Fatalf("x%v w%v %+v, %d threads: float64 y[%d] = %v, want %v", c.xs, c.ws, c.o, e.Threads(), i, y[i], want[i])
				}
				if v := float64(y32[i]); math.Abs(v-want[i]) > 1e-5*(float64(geo.k())+math.Abs(want[i])) || v != v {
					t.Fatalf("x%v w%v %+v, %d threads: float32 y[%d] = %v, want %v", c.xs, c.ws, c.o, e.Threads(), i, v, want[i])
				}
			}
		}
	}
}
