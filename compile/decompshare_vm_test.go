package compile_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/race"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// The parts of one decomposition that a loss and its gradient read come
// from one factorisation, with the bits of factorising for each part:
// Eigh, QR and SVD (tall and wide), float32 and float64, batched, on both
// sides of the switch to LAPACK; a run allocates nothing (LAPACK's
// workspace queries included).
func TestDecompShareKeepsBits(t *testing.T) {
	families := []struct {
		name  string
		parts func(a *graph.Node) []*graph.Node
		wide  bool
	}{
		{"Eigh", func(a *graph.Node) []*graph.Node {
			v, w := ops.Eigh(a)
			return []*graph.Node{v, w}
		}, false},
		{"QR", func(a *graph.Node) []*graph.Node {
			q, r := ops.QR(a)
			return []*graph.Node{q, r}
		}, false},
		{"SVD", func(a *graph.Node) []*graph.Node {
			u, s, vh := ops.SVD(a)
			return []*graph.Node{u, s, vh}
		}, true},
	}
	for _, fam := range families {
		for _, dt := range []tensor.Dtype{graph.Float32, graph.Float64} {
			for _, n := range []int{5, 36} {
				shapes := [][]int{{2, n, n}}
				if fam.name != "Eigh" {
					shapes = append(shapes, []int{n + 3, n})
				}
				if fam.wide {
					shapes = append(shapes, []int{n, n + 2})
				}
				for _, shape := range shapes {
					t.Run(fmt.Sprintf("%s/%v/%v", fam.name, dt, shape), func(t *testing.T) {
						checkDecompShare(t, fam.parts, dt, shape)
					})
				}
			}
		}
	}
}

func checkDecompShare(t *testing.T, parts func(*graph.Node) []*graph.Node, dt tensor.Dtype, shape []int) {
	g := graph.New()
	size := graph.ShapeSize(shape)
	av := make([]float64, size)
	for i := range av {
		av[i] = math.Sin(0.37*float64(i)+0.1) + 0.01*float64(i%7)
	}
	a := g.Param("a", must(graph.FromFloat64s(dt, av, shape...)))
	ps := parts(a)
	var loss *graph.Node
	for i, p := range ps {
		term := ops.Sum(ops.Scale(ops.Sin(p), float64(i+1)))
		if loss == nil {
			loss = term
		} else {
			loss = ops.Add(loss, term)
		}
	}
	grads := must(compile.Grad(loss, a))
	outs := append(append([]*graph.Node{loss}, ps...), grads...)
	shared := must(compile.Compile(outs, compile.WithChecks()))
	separate := must(compile.Compile(outs, compile.WithoutPass("decompshare")))
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.OpName()
	}
	if got := countParts(shared, names); got != 1 {
		t.Errorf("%d instructions compute %v, want one joint decomposition:\n%v", got, names, shared)
	}
	if got := countParts(separate, names); got != len(ps) {
		t.Fatalf("without the pass, %d instructions compute %v, want %d: the test does not exercise sharing", got, names, len(ps))
	}
	m := must(vm.New(shared))
	defer m.Close()
	// (Not under the race detector: LAPACK's products take gemm's serial
	// buffers from a sync.Pool, which it empties at random.)
	if allocs := testing.AllocsPerRun(3, func() { _ = m.Run(nil) }); allocs != 0 && !race.Enabled {
		t.Errorf("a run of the shared program allocates %v times", allocs)
	}
	got, want := evalBits(t, shared, outs), evalBits(t, separate, outs)
	for i := range outs {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("%v element %d: got %v, want %v (factorised for each part)", outs[i], j,
					math.Float64frombits(got[i][j]), math.Float64frombits(want[i][j]))
			}
		}
	}
}

// countParts counts the program's instructions that compute any of the
// named parts (alone, or jointly with others).
func countParts(p *compile.Program, names []string) int {
	n := 0
	for i := range p.Instructions() {
		for _, part := range strings.Split(p.Instructions()[i].Name(), "+") {
			if slices.Contains(names, part) {
				n++
				break
			}
		}
	}
	return n
}

// evalBits runs p and returns the nodes' elements as float64 bits.
func evalBits(t *testing.T, p *compile.Program, nodes []*graph.Node) [][]uint64 {
	t.Helper()
	m := must(vm.New(p))
	if err := m.Run(nil); err != nil {
		t.Fatal(err)
	}
	out := make([][]uint64, len(nodes))
	for i, n := range nodes {
		v := must(m.Value(n))
		for j := range v.Size() {
			out[i] = append(out[i], math.Float64bits(graph.Float(v, j)))
		}
	}
	return out
}

// BenchmarkDecompShare times the value and gradient of a loss over every
// part of a 64×64 matrix's Eigh and SVD, float64, with the parts sharing
// one factorisation and without.
func BenchmarkDecompShare(b *testing.B) {
	for _, fam := range []struct {
		name  string
		parts func(*graph.Node) []*graph.Node
	}{
		{"Eigh", func(a *graph.Node) []*graph.Node { v, w := ops.Eigh(a); return []*graph.Node{v, w} }},
		{"SVD", func(a *graph.Node) []*graph.Node { u, s, vh := ops.SVD(a); return []*graph.Node{u, s, vh} }},
	} {
		for _, mode := range []string{"shared", "separate"} {
			b.Run(fam.name+"/"+mode, func(b *testing.B) {
				g := graph.New()
				av := make([]float64, 64*64)
				for i := range av {
					av[i] = math.Sin(0.37*float64(i) + 0.1)
				}
				a := g.Param("a", must(graph.FromFloat64s(graph.Float64, av, 64, 64)))
				var loss *graph.Node
				for i, p := range fam.parts(a) {
					term := ops.Sum(ops.Scale(ops.Sin(p), float64(i+1)))
					if loss == nil {
						loss = term
					} else {
						loss = ops.Add(loss, term)
					}
				}
				outs := append([]*graph.Node{loss}, must(compile.Grad(loss, a))...)
				var opts []compile.Option
				if mode == "separate" {
					opts = append(opts, compile.WithoutPass("decompshare"))
				}
				m := must(vm.New(must(compile.Compile(outs, opts...))))
				defer m.Close()
				for b.Loop() {
					if err := m.Run(nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
