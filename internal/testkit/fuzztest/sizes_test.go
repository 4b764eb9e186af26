package fuzztest

import (
	"runtime"
	"slices"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// FuzzDerivativeSizes builds derivatives (Jacobian in each mode, Hessian,
// HVP, SparseJacobian, SparseHessian, JacobianPattern,
// PerExampleGradients) of dense and sparse functions of inputs of random
// sizes, up to 2^40 elements, under a random memory limit of at most
// 16 MiB: each returns an error or a result, never panics, and never
// allocates far past the limit (an n² tensor of a big n would end the
// fuzzer out of memory).
func FuzzDerivativeSizes(f *testing.F) {
	for _, seed := range [][]byte{
		// A limit of 16 MiB, float64, a vector of 2^k elements, a
		// function, a builder: the Hessian of Σx² at 2^16 and 2^32, a
		// forward Jacobian at 2^15, a sparse one of x·Σx at 2^15, a
		// sparse Hessian of (Σx)² at 2^13.
		{14, 1, 16, 1, 1, 3, 3}, {14, 1, 32, 1, 1, 3, 3}, {14, 1, 15, 1, 1, 0, 1}, {14, 1, 15, 1, 1, 1, 5},
		{14, 1, 13, 1, 1, 4, 6},
		// Per-example gradients of a (2^10, 2^4) batch and 2^20 parameters.
		{14, 1, 10, 1, 0, 4, 1, 1, 8, 20, 1, 1},
		{4, 3, 0, 0}, {14, 16, 1, 5}, {14, 12, 3, 6}, {10, 32, 1, 1}, {10, 16, 2, 8, 3, 4}, {0, 8, 4, 3},
	} {
		f.Add(seed)
	}
	f.Fuzz(buildDerivative)
}

// buildDerivative decodes a limit, an input, a function and a builder
// from data, and builds the derivative.
func buildDerivative(t *testing.T, data []byte) {
	in := NewBytes(data)
	limit := int64(1) << (10 + in.IntN(15))
	prev := graph.SetMemoryLimit(limit)
	defer graph.SetMemoryLimit(prev)
	g := graph.New()
	dtype := graph.Float64
	if in.IntN(4) == 0 {
		dtype = graph.Float32
	}
	x := g.Input("x", dtype, sizes(in)...)
	y := function(in.IntN(6), x)
	builder := in.IntN(len(derivatives))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d, err := derivatives[builder].build(in, y, x)
	runtime.ReadMemStats(&after)
	noPanic(t, derivatives[builder].name, err)
	if err == nil && d == nil {
		t.Fatalf("%s of %v with respect to %v: no result and no error", derivatives[builder].name, y, x)
	}
	if used := after.TotalAlloc - before.TotalAlloc; used > 1<<30 {
		t.Fatalf("%s of %v with respect to %v allocated %d bytes under a limit of %d", derivatives[builder].name, y, x, used, limit)
	}
}

// sizes decodes a shape of one or two dimensions, each a power of two
// up to 2^40 give or take one.
func sizes(in *Bytes) []int {
	dim := func() int { return max(0, 1<<in.IntN(41)+in.Signed(1)) }
	shape := []int{dim()}
	if in.IntN(2) == 0 {
		shape = append(shape, dim())
	}
	return shape
}

// function is one of a few functions of x: elementwise (a diagonal
// Jacobian), x·Σx (dense), an arrowhead, Σx² and (Σx)² (scalars whose
// Hessians are diagonal and dense), a sum over x's first axis.
func function(k int, x *graph.Node) *graph.Node {
	switch k {
	case 0:
		return ops.Sin(x)
	case 1:
		return ops.Mul(x, ops.Sum(x))
	case 2:
		return ops.Concat(0, ops.Reshape(x, -1), ops.Reshape(ops.Sum(x), 1))
	case 3:
		return ops.Sum(ops.Square(x))
	case 4:
		return ops.Square(ops.Sum(x))
	}
	return ops.Sum(ops.Exp(x), 0)
}

// derivatives are the builders FuzzDerivativeSizes calls.
var derivatives = []struct {
	name  string
	build func(in *Bytes, y, x *graph.Node) (any, error)
}{
	{"Jacobian", func(_ *Bytes, y, x *graph.Node) (any, error) { return result(compile.Jacobian(y, x)) }},
	{"JacobianWith(Forward)", func(_ *Bytes, y, x *graph.Node) (any, error) {
		return result(compile.JacobianWith(y, x, compile.Forward))
	}},
	{"JacobianWith(Reverse)", func(_ *Bytes, y, x *graph.Node) (any, error) {
		return result(compile.JacobianWith(y, x, compile.Reverse))
	}},
	{"Hessian", func(_ *Bytes, y, x *graph.Node) (any, error) { return result(compile.Hessian(y, x)) }},
	{"HVP", func(_ *Bytes, y, x *graph.Node) (any, error) { return result(compile.HVP(y, x, x)) }},
	{"SparseJacobian", func(_ *Bytes, y, x *graph.Node) (any, error) { return result(compile.SparseJacobian(y, x)) }},
	{"SparseHessian", func(_ *Bytes, y, x *graph.Node) (any, error) { return result(compile.SparseHessian(y, x)) }},
	{"JacobianPattern", func(_ *Bytes, y, x *graph.Node) (any, error) { return result(compile.JacobianPattern(y, x)) }},
	{"PerExampleGradients", func(in *Bytes, _, x *graph.Node) (any, error) {
		// x is the batch; the parameter has a size of its own.
		w := x.Graph().Input("w", x.DType(), sizes(in)...)
		loss := func(e []*graph.Node) *graph.Node { return ops.Mul(ops.Sum(e[0]), ops.Sum(w)) }
		return result(compile.PerExampleGradients(loss, []*graph.Node{x}, []*graph.Node{w}))
	}},
}

// result is a builder's result as an any, nil where it is a nil pointer
// or slice.
func result[T any](v T, err error) (any, error) {
	switch r := any(v).(type) {
	case *graph.Node:
		if r == nil {
			return nil, err
		}
	case *compile.Sparse:
		if r == nil || r.Values == nil || r.Pattern == nil {
			return nil, err
		}
	case *compile.Pattern:
		if r == nil {
			return nil, err
		}
	case []*graph.Node:
		if len(r) == 0 || slices.Contains(r, nil) {
			return nil, err
		}
	}
	return v, err
}
