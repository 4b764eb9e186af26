package ops

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// View is a strided view of a tensor's elements: element (i₀, i₁, …) of a
// value of the view's shape lies at offset + Σ iₐ·strides[a] among the
// tensor's row-major elements. The layout ops (Transpose, Slice, Reshape)
// move elements to such views (View.Through); ReadThrough makes ops that
// read their operand through one, where it lies, instead of from a copy.
// Views are comparable.
type View struct {
	rank    int
	shape   [maxRank]int
	strides [maxRank]int
	offset  int
	size    int    // the tensor's number of elements
	via     string // the layout ops, outermost first: "Reshape(Slice)"
}

// ContiguousView is the view of a tensor of the given shape as it lies:
// row-major strides, offset 0. ok is false above the rank views support
// (MaxFusedRank).
func ContiguousView(shape []int) (v View, ok bool) {
	if len(shape) > maxRank {
		return View{}, false
	}
	v = View{rank: len(shape), size: graph.ShapeSize(shape)}
	copy(v.shape[:], shape)
	stride := 1
	for a := len(shape) - 1; a >= 0; a-- {
		v.strides[a] = stride
		stride *= shape[a]
	}
	return v, true
}

// Shape returns the view's shape.
func (v View) Shape() []int { return append([]int(nil), v.shape[:v.rank]...) }

// String is the view's shape, strides and offset: "[6 2] [1 6] 6".
func (v View) String() string {
	return fmt.Sprintf("%v %v %d", v.shape[:v.rank], v.strides[:v.rank], v.offset)
}

// Through returns the view of the tensor that layout (a Transpose, Slice
// or Reshape) makes of v's elements, its output being of type out. ok is
// false for other ops, for a layout whose output from v's shape is not out
// (the view would read past its tensor), and for a Reshape that regroups
// axes v does not step across as one (the reshaped elements are then no
// strided view).
func (v View) Through(layout graph.Op, out graph.Type) (w View, ok bool) {
	if out.Rank() > maxRank || out.Size() == 0 || !IsLayout(layout) {
		return View{}, false
	}
	if t, err := layout.Type([]graph.Type{out.WithShape(v.Shape()...)}); err != nil || !t.Equal(out) {
		return View{}, false
	}
	w = View{rank: out.Rank(), offset: v.offset, size: v.size}
	copy(w.shape[:], out.Shape)
	switch op := layout.(type) {
	case transposeOp:
		if op.perm.rank != v.rank {
			return View{}, false
		}
		for i, p := range op.perm.dims[:op.perm.rank] {
			w.strides[i] = v.strides[p]
		}
	case sliceOp:
		if op.axis < 0 || op.axis >= v.rank || out.Rank() != v.rank {
			return View{}, false
		}
		w.strides = v.strides
		w.offset += op.start * v.strides[op.axis]
	case reshapeOp:
		if !v.reshaped(&w) {
			return View{}, false
		}
	default:
		return View{}, false
	}
	w.via = layout.Name()
	if v.via != "" {
		w.via += "(" + v.via + ")"
	}
	return w, true
}

// reshaped sets w's strides (w's shape set, of v's size) to step across
// v's elements in row-major order, as numpy reshapes a view without a
// copy: v's axes and w's are matched in groups of equal size (axes of
// extent 1 aside), and each group of v's axes must be stepped across as
// one axis. It reports whether they are.
func (v View) reshaped(w *View) bool {
	var oldShape, oldStrides, newAxes []int
	for a := range v.rank {
		if v.shape[a] != 1 {
			oldShape, oldStrides = append(oldShape, v.shape[a]), append(oldStrides, v.strides[a])
		}
	}
	for a := range w.rank {
		w.strides[a] = 0 // an axis of extent 1 is never stepped along
		if w.shape[a] != 1 {
			newAxes = append(newAxes, a)
		}
	}
	oi, ni := 0, 0
	for ni < len(newAxes) && oi < len(oldShape) {
		oj, nj := oi+1, ni+1
		np, op := w.shape[newAxes[ni]], oldShape[oi]
		for np != op {
			if np < op {
				np *= w.shape[newAxes[nj]]
				nj++
			} else {
				op *= oldShape[oj]
				oj++
			}
		}
		for k := oi; k < oj-1; k++ {
			if oldStrides[k] != oldShape[k+1]*oldStrides[k+1] {
				return false
			}
		}
		stride := oldStrides[oj-1]
		for k := nj - 1; k >= ni; k-- {
			w.strides[newAxes[k]] = stride
			stride *= w.shape[newAxes[k]]
		}
		oi, ni = oj, nj
	}
	return oi == len(oldShape) && ni == len(newAxes)
}

// contiguous reports whether v is its tensor as it lies (whatever its
// strides along axes of extent 1, never stepped along).
func (v View) contiguous() bool {
	c, _ := ContiguousView(v.shape[:v.rank])
	for a := range v.rank {
		if v.shape[a] != 1 && v.strides[a] != c.strides[a] {
			return false
		}
	}
	return v.offset == 0 && v.size == c.size
}

// readThroughOp is a reduction (Sum, Mean, Max, SumTo) reading its operand
// through a view of its input: it computes what op computes on the view's
// elements copied out, bit for bit, without the copy.
type readThroughOp struct {
	op   graph.Op // a reduceOp or sumToOp
	view View
}

// ReadThrough returns an op computing consumer with its operand-th
// operand the elements of view v, bit for bit, from the tensor v views,
// read where they lie (with v's strides) rather than from a copy that a
// Transpose or Slice makes: consumer(…, layout(x), …) becomes
// ReadThrough(consumer, …)(…, x, …). in are consumer's operands' types.
// consumer is a Sum, Mean, Max or SumTo of a view whose rows' elements
// lie a few apart, or are columns of the tensor folded side by side (a
// transposed operand reduced over its last axis), or a unary or binary
// elementwise op reading a view whose elements lie a few apart (a
// Slice's every other element, say) against operands of its own shape:
// elsewhere a row would walk a column, an element a cache line, and
// Transpose's blocked copy is faster. ok is
// false for other ops and views, and for a view of its tensor as it lies
// (nothing to gain). The compiler makes such ops (pass "readthrough"),
// after differentiation: they have no gradient.
func ReadThrough(consumer graph.Op, in []graph.Type, operand int, v View) (op graph.Op, ok bool) {
	if v.rank == 0 || v.contiguous() || operand < 0 || operand >= len(in) {
		return nil, false
	}
	var buf [maxRank]int
	var out []int // the reduction's output shape, its reduced axes kept
	switch c := consumer.(type) {
	case reduceOp:
		if c.kind == reduceLogSumExp {
			return nil, false
		}
		out = keepShape(&buf, v.shape[:v.rank], c.axes)
	case sumToOp:
		to, err := c.to.shape()
		if err != nil {
			return nil, false
		}
		out = to
	case unary, binary:
		return readThroughElementwise(consumer, in, operand, v)
	default:
		return nil, false
	}
	if w := v.reductionWalker(out); w.rank > 0 && w.inner[1] > readThroughStride && !w.columns() {
		return nil, false // its rows would walk columns of the tensor, an element a cache line
	}
	return readThroughOp{op: consumer, view: v}, true
}

// Name is the reduction's, with the layout ops it reads through:
// "Sum(Transpose)".
func (op readThroughOp) Name() string { return op.op.Name() + "(" + op.view.via + ")" }

// viewType is the type of the reduction's operand, the view's elements.
func (op readThroughOp) viewType(in graph.Type) graph.Type {
	return in.WithShape(op.view.shape[:op.view.rank]...)
}

// Type checks that the input is the tensor the view was made for, and
// returns the reduction's type.
func (op readThroughOp) Type(in []graph.Type) (graph.Type, error) {
	if _, err := graph.CheckInputs(in, 1); err != nil {
		return graph.Type{}, err
	}
	if in[0].Size() != op.view.size {
		return graph.Type{}, fmt.Errorf("input has %d elements, the view reads %d", in[0].Size(), op.view.size)
	}
	return op.op.Type([]graph.Type{op.viewType(in[0])})
}

// Cost is the reduction's.
func (op readThroughOp) Cost(in []graph.Type, out graph.Type) graph.Cost {
	return reductionCost([]graph.Type{op.viewType(in[0])}, out)
}

// Backward reports that the op has no gradient: the compiler makes it
// after differentiation. Build the gradient from the reduction of the
// layout op.
func (op readThroughOp) Backward(ctx *graph.GradContext, _ *graph.Node) []*graph.Node {
	ctx.Errorf("%s is made by the compiler after differentiation and has no gradient: differentiate the reduction of the layout op", op.Name())
	return nil
}

// Forward reduces the view's elements, walked as the reduction walks its
// operand copied out, so every output is added (or compared) in the same
// order.
func (op readThroughOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return forFloat(out.Dtype(),
		func() error {
			readThroughKernel(op, floats[float32](out), floats[float32](in[0]), out.Shape())
			return nil
		},
		func() error {
			readThroughKernel(op, floats[float64](out), floats[float64](in[0]), out.Shape())
			return nil
		})
}

func readThroughKernel[T float](op readThroughOp, out, x []T, outShape []int) {
	v := op.view
	x = x[v.offset:]
	if r, ok := op.op.(reduceOp); ok {
		reduceKernel(r, out, x, &v)
		return
	}
	w := v.reductionWalker(outShape)
	sumToKernel(&w, out, x)
}

// IsLayout reports whether op is a Transpose, Slice or Reshape: an op
// View.Through follows.
func IsLayout(op graph.Op) bool {
	switch op.(type) {
	case transposeOp, sliceOp, reshapeOp:
		return true
	}
	return false
}
