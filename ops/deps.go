package ops

import "github.com/nabla-go/nabla/graph"

// Deps rules (graph.ElementDeps): which input elements each output
// element of an op may depend on, for the sparsity patterns of Jacobians
// and Hessians. Ops without a rule are taken to mix every element.

// unravel writes e's multi-index in shape into idx.
func unravel(e int, shape []int, idx []int) {
	for a := len(shape) - 1; a >= 0; a-- {
		if shape[a] > 0 {
			idx[a] = e % shape[a]
			e /= shape[a]
		}
	}
}

// ravel is the flat index of idx in shape.
func ravel(idx, shape []int) int {
	e := 0
	for a, n := range shape {
		e = e*n + idx[a]
	}
	return e
}

// broadcastElem is the element of an input of shape in that output element
// e of shape out reads under NumPy broadcasting.
func broadcastElem(e int, out, in []int) int {
	var oi, ii [maxRank]int
	unravel(e, out, oi[:len(out)])
	off := len(out) - len(in)
	for a, n := range in {
		if n != 1 {
			ii[a] = oi[a+off]
		}
	}
	return ravel(ii[:len(in)], in)
}

// Deps: an elementwise op reads its input's element.
func (unary) Deps(_ []graph.Type, _ graph.Type, e int, read func(input, elem int)) { read(0, e) }

// Deps: each input's broadcast element.
func (binary) Deps(in []graph.Type, out graph.Type, e int, read func(input, elem int)) {
	for i, t := range in {
		read(i, broadcastElem(e, out.Shape, t.Shape))
	}
}

// Deps: the same element.
func (identityOp) Deps(_ []graph.Type, _ graph.Type, e int, read func(input, elem int)) { read(0, e) }

// Deps: none (no derivative flows through StopGradient).
func (stopGradientOp) Deps([]graph.Type, graph.Type, int, func(input, elem int)) {}

// Deps: the element of the same flat index.
func (reshapeOp) Deps(_ []graph.Type, _ graph.Type, e int, read func(input, elem int)) { read(0, e) }

// Deps: the element broadcast from.
func (broadcastToOp) Deps(in []graph.Type, out graph.Type, e int, read func(input, elem int)) {
	read(0, broadcastElem(e, out.Shape, in[0].Shape))
}

// Deps: the elements summed into e: those broadcasting from it.
func (sumToOp) Deps(in []graph.Type, out graph.Type, e int, read func(input, elem int)) {
	shape, to := in[0].Shape, out.Shape
	var oi, fixed [maxRank]int
	unravel(e, to, oi[:len(to)])
	var reduced uint64
	off := len(shape) - len(to)
	for a := range shape {
		if a < off || to[a-off] == 1 && shape[a] != 1 {
			reduced |= 1 << a
		} else {
			fixed[a] = oi[a-off]
		}
	}
	forReduced(shape, reduced, fixed, func(k int) { read(0, k) })
}

// Deps: the elements reduced into e.
func (op reduceOp) Deps(in []graph.Type, out graph.Type, e int, read func(input, elem int)) {
	shape := in[0].Shape
	var oi, fixed [maxRank]int
	unravel(e, out.Shape, oi[:len(out.Shape)])
	o := 0
	for a := range shape {
		if op.axes&(1<<a) == 0 {
			fixed[a] = oi[o]
		}
		if op.axes&(1<<a) == 0 || op.keep {
			o++
		}
	}
	forReduced(shape, op.axes, fixed, func(k int) { read(0, k) })
}

// forReduced calls fn with the flat index of every element of shape whose
// index on the axes not in reduced is fixed's.
func forReduced(shape []int, reduced uint64, fixed [maxRank]int, fn func(k int)) {
	for _, n := range shape {
		if n == 0 {
			return
		}
	}
	idx := fixed
	for a := range shape {
		if reduced&(1<<a) != 0 {
			idx[a] = 0
		}
	}
	for {
		fn(ravel(idx[:len(shape)], shape))
		a := len(shape) - 1
		for ; a >= 0; a-- {
			if reduced&(1<<a) == 0 {
				continue
			}
			idx[a]++
			if idx[a] < shape[a] {
				break
			}
			idx[a] = 0
		}
		if a < 0 {
			return
		}
	}
}

// Deps: the element sliced.
func (op sliceOp) Deps(in []graph.Type, out graph.Type, e int, read func(input, elem int)) {
	var idx [maxRank]int
	unravel(e, out.Shape, idx[:len(out.Shape)])
	idx[op.axis] += op.start
	read(0, ravel(idx[:len(out.Shape)], in[0].Shape))
}

// Deps: the element placed at e, none for padding.
func (op padOp) Deps(in []graph.Type, out graph.Type, e int, read func(input, elem int)) {
	var idx [maxRank]int
	unravel(e, out.Shape, idx[:len(out.Shape)])
	idx[op.axis] -= op.before
	if idx[op.axis] >= 0 && idx[op.axis] < in[0].Shape[op.axis] {
		read(0, ravel(idx[:len(out.Shape)], in[0].Shape))
	}
}

// Deps: the element of the input that holds e.
func (op concatOp) Deps(in []graph.Type, out graph.Type, e int, read func(input, elem int)) {
	var idx [maxRank]int
	unravel(e, out.Shape, idx[:len(out.Shape)])
	for i, t := range in {
		if n := t.Shape[op.axis]; idx[op.axis] >= n {
			idx[op.axis] -= n
			continue
		}
		read(i, ravel(idx[:len(out.Shape)], t.Shape))
		return
	}
}

// Deps: the element moved to e.
func (op transposeOp) Deps(in []graph.Type, out graph.Type, e int, read func(input, elem int)) {
	var oi, ii [maxRank]int
	unravel(e, out.Shape, oi[:len(out.Shape)])
	for a, p := range op.perm.dims[:op.perm.rank] {
		ii[p] = oi[a]
	}
	read(0, ravel(ii[:len(out.Shape)], in[0].Shape))
}
