package fuzztest

import (
	"io"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// FuzzBuild decodes bytes into any sequence of builders over any shapes
// (rank up to 10, empty ones), axes, permutations, nil inputs and nodes of
// another graph. The result is a valid graph or a sticky error, never a
// panic; a valid graph compiles, runs on random feeds, and the gradient of
// the sum of its outputs builds, compiles and runs.
func FuzzBuild(f *testing.F) {
	for _, seed := range [][]byte{
		{1, 2, 3, 4, 5, 6, 7, 8, 9},
		{0, 0, 1, 2, 2, 2, 1, 0, 16, 1, 1, 1, 1, 17, 0, 0},
		{0, 2, 10, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 30, 0, 1},
		{0, 1, 2, 2, 3, 1, 0, 1, 2, 3, 1, 60, 2, 1, 59, 3, 1, 4},
		{0, 1, 3, 2, 2, 3, 1, 3, 26, 5, 5, 1, 3, 4, 40, 0, 3, 1, 45, 4, 4},
		[]byte("hostile: nil inputs \x00\xff and foreign nodes \x01\xfe"),
	} {
		f.Add(seed)
	}
	limitMemory(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		b := NewBuilder(NewBytes(data), Mode{Hostile: true, MaxRank: 10, MaxOps: 24}, graph.New())
		b.Build()
		outs := outputs(b)
		if len(outs) == 0 {
			return
		}
		if err := b.G.Err(); err != nil {
			if !strings.HasPrefix(err.Error(), "nabla") {
				t.Fatalf("error %q does not say it is nabla's", err)
			}
			if _, cerr := compile.Compile(outs); cerr == nil {
				t.Fatalf("a poisoned graph (%v) compiled", err)
			}
			if werr := graph.WriteDot(io.Discard, b.G, graph.DotOptions{}); werr == nil {
				t.Fatalf("a poisoned graph (%v) was drawn", err)
			}
			return
		}
		if err := graph.WriteDot(io.Discard, b.G, graph.DotOptions{}); err != nil {
			t.Fatalf("WriteDot of a valid graph: %v", err)
		}
		if _, err := run(t, b, outs); err != nil {
			return // a run may fail on its data: an index out of range
		}
		loss, wrt := sumOfOutputs(b, outs)
		if loss == nil {
			return
		}
		grads, err := compile.GradWith(loss, wrt, compile.ZerosIfDisconnected())
		if err != nil {
			noPanic(t, "Grad", err)
			return
		}
		_, _ = run(t, b, grads)
	})
}

// sumOfOutputs sums the outputs of the first output's dtype into a scalar,
// and lists the leaves of that dtype to differentiate it with respect to.
func sumOfOutputs(b *Builder, outs []*graph.Node) (*graph.Node, []*graph.Node) {
	dtype := outs[0].DType()
	var loss *graph.Node
	for _, o := range outs {
		if o.DType() != dtype || len(o.Shape()) > 8 { // reductions stop at rank 8
			continue
		}
		s := ops.Sum(o)
		if loss == nil {
			loss = s
		} else {
			loss = ops.Add(loss, s)
		}
	}
	if loss == nil {
		return nil, nil
	}
	var wrt []*graph.Node
	for _, l := range b.Leaves {
		if l.Err() == nil && l.DType() == dtype && l.Graph() == b.G {
			wrt = append(wrt, l)
		}
	}
	if len(wrt) == 0 {
		return nil, nil
	}
	return loss, wrt
}
