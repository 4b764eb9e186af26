package fuzztest

import (
	"errors"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
)

// smoothSeeds seed the targets that decode a shape and then smooth ops
// (FuzzGrad, FuzzJVP).
var smoothSeeds = [][]byte{
	{2, 3, 0, 5, 0, 12, 1, 20, 0},
	{1, 2, 1, 16, 0, 2, 1, 21, 1, 17},
	{2, 2, 1, 22, 0, 14, 1, 10, 0, 18},
	{0, 3, 2, 16, 1, 12, 0, 6, 1, 7, 0, 19},
	{2, 2, 2, 1, 4, 0, 15, 1, 1, 8, 0, 9, 1, 11},
}

// FuzzGrad checks the first and second derivatives of random functions of
// smooth ops in float64 against finite differences.
func FuzzGrad(f *testing.F) {
	for _, seed := range smoothSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := NewBytes(data)
		shape := in.Shape(3, 3)
		inputs := []*tensor.Dense{nil, nil}
		seed := NewBuilder(NewBytes(data), Mode{}, graph.New()).Rand()
		for i := range inputs {
			inputs[i] = Values(seed, graph.TypeOf(graph.Float64, shape...))
		}
		rest := data[min(in.pos, len(data)):]
		fn := func(x []*graph.Node) *graph.Node {
			return NewBuilder(NewBytes(rest), Mode{MaxOps: 6}, x[0].Graph(), x...).BuildSmooth()
		}
		opts := gradcheck.Options{Seed: 1}
		if err := gradcheck.Check(fn, inputs, opts); err != nil {
			fail(t, "first derivatives", err)
		}
		if err := gradcheck.GradGradCheck(fn, inputs, opts); err != nil {
			fail(t, "second derivatives", err)
		}
	})
}

// fail reports a derivative that disagrees with finite differences; a
// function the check cannot take (one whose output does not depend on the
// inputs, say) is not this target's business.
func fail(t *testing.T, what string, err error) {
	t.Helper()
	var ge *gradcheck.Error
	if errors.As(err, &ge) && ge.Problem == gradcheck.Misuse && !strings.Contains(err.Error(), "panic") {
		return
	}
	t.Fatalf("%s: %v", what, err)
}
