package fuzztest

import (
	"math"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
)

// optionalPasses are the passes compile.WithoutPass switches off.
var optionalPasses = []string{"deadcode", "constfold", "simplify", "cse", "solve", "lushare", "decompshare", "matmuladd", "readthrough", "late deadcode", "sharedmatmul", "memory"}

// FuzzPasses checks that the optional passes do not change values: a
// random valid graph and its gradient give the same bits with every pass
// on and with all of them off, at values that include signed zeros, huge
// and tiny numbers, infinities and NaN (both NaN is equal; payloads may
// differ). matmuladd and solve round differently (a product and the sum
// onto it round once; a solve is not the inverse times the product): they
// are off for that comparison, and a second graph of moderate values
// checks them, with every pass on, to rounding.
func FuzzPasses(f *testing.F) {
	for _, seed := range graphSeeds {
		f.Add(seed)
	}
	off := make([]compile.Option, len(optionalPasses))
	for i, name := range optionalPasses {
		off[i] = compile.WithoutPass(name)
	}
	limitMemory(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		comparePasses(t, data, Mode{MaxRank: 3, MaxOps: 12, Extreme: true}, sameBits, off,
			compile.WithoutPass("matmuladd"), compile.WithoutPass("solve"))
		comparePasses(t, data, Mode{MaxRank: 3, MaxOps: 12}, sameToRounding, off)
	})
}

// comparePasses decodes a graph from data in mode and compares, by same,
// its outputs and gradients compiled with on and with off.
func comparePasses(t *testing.T, data []byte, mode Mode, same func(a, b *tensor.Dense) string, off []compile.Option, on ...compile.Option) {
	t.Helper()
	b := NewBuilder(NewBytes(data), mode, graph.New())
	b.Build()
	outs := outputs(b)
	if len(outs) == 0 || b.G.Err() != nil {
		return
	}
	if loss, wrt := sumOfOutputs(b, outs); loss != nil {
		grads, err := compile.GradWith(loss, wrt, compile.ZerosIfDisconnected())
		if err != nil {
			return // a gradient past rank 8, say: FuzzBuild checks the error
		}
		outs = append(outs, grads...)
	}
	got, errOn := run(t, b, outs, on...)
	plain, errOff := run(t, b, outs, off...)
	if errOn != nil || errOff != nil {
		// A data error (an index out of range) in a value that the
		// passes fold away or drop fails only the plain program.
		return
	}
	for i := range got {
		if err := same(got[i], plain[i]); err != "" {
			t.Fatalf("output %d (%v): %s with the passes on and all off (extreme values: %v)", i, outs[i], err, mode.Extreme)
		}
	}
}

// sameBits says where two values differ in any bit, or "": NaNs are equal
// whatever their payloads and signs.
func sameBits(a, b *tensor.Dense) string {
	x, y := graph.Float64s(a), graph.Float64s(b)
	for i := range x {
		u, v := x[i], y[i]
		if math.Float64bits(u) != math.Float64bits(v) && !(math.IsNaN(u) && math.IsNaN(v)) {
			return "element " + itoa(i) + " is " + ftoa(u) + " and " + ftoa(v)
		}
	}
	return ""
}

// sameToRounding says how two values differ beyond rounding, or "".
func sameToRounding(a, b *tensor.Dense) string {
	tol := 1e-9
	if a.Dtype() == graph.Float32 {
		tol = 1e-4
	}
	x, y := graph.Float64s(a), graph.Float64s(b)
	for i := range x {
		u, v := x[i], y[i]
		switch {
		case math.IsNaN(u) && math.IsNaN(v), u == v:
		case math.IsNaN(u) || math.IsNaN(v) || math.IsInf(u, 0) || math.IsInf(v, 0) ||
			math.Abs(u-v) > tol*(1+math.Max(math.Abs(u), math.Abs(v))):
			return "element " + itoa(i) + " is " + ftoa(u) + " and " + ftoa(v)
		}
	}
	return ""
}

// graphSeeds are the seed inputs of the targets that decode valid graphs
// and their gradients (FuzzPasses, FuzzUpdates).
var graphSeeds = [][]byte{
	{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
	{0, 1, 1, 2, 2, 0, 3, 1, 2, 2, 40, 1, 40, 1, 16, 0, 1, 16, 1, 2},
	{0, 2, 2, 2, 2, 0, 2, 2, 3, 3, 26, 1, 2, 16, 0, 0, 41, 1, 0, 41, 3, 3},
	{0, 2, 2, 2, 2, 0, 2, 2, 2, 3, 43, 0, 1, 1, 1, 17, 1, 1},
}
