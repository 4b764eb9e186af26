package ops

import (
	"fmt"
	"unsafe"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// float is the element type kernels are generic over.
type float interface{ ~float32 | ~float64 }

// floats returns t's backing slice as []T without copying or allocating; T
// must match t's dtype (kernels dispatch on it with forFloat).
func floats[T float](t *tensor.Dense) []T {
	var z T
	if unsafe.Sizeof(z) == 4 {
		f := t.Float32s()
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(f))), len(f))
	}
	f := t.Float64s()
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(f))), len(f))
}

// sliceAs returns s as a []U of the same length, without copying; T and U
// must have the same size.
func sliceAs[U, T float](s []T) []U {
	return unsafe.Slice((*U)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// forFloat runs the float32 or float64 instantiation of a kernel, by dtype.
func forFloat(dtype tensor.Dtype, f32 func() error, f64 func() error) error {
	switch dtype {
	case graph.Float32:
		return f32()
	case graph.Float64:
		return f64()
	}
	return fmt.Errorf("dtype %v is not supported (float32 or float64)", dtype)
}

// dtypeName is dtype's name, "invalid" for the zero Dtype (whose String
// method panics), for errors naming a dtype a user gave.
func dtypeName(dtype tensor.Dtype) string {
	if dtype.Type == nil {
		return "invalid"
	}
	return dtype.String()
}

// elems returns t's backing slice as []T without copying or allocating;
// T must be of the width of t's dtype's elements: its element type, or
// (for a kernel that only moves values) an unsigned integer of that
// width (forWidth).
func elems[T any](t *tensor.Dense) []T {
	switch t.Dtype() {
	case graph.Float32:
		return reinterpret[T](t.Float32s())
	case graph.Float64:
		return reinterpret[T](t.Float64s())
	case graph.Int32:
		return reinterpret[T](t.Int32s())
	}
	return reinterpret[T](t.Int64s())
}

// reinterpret is s's elements as a slice of T, of the same width.
func reinterpret[T, E any](s []E) []T {
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// forWidth runs w4 for a dtype of 4-byte elements, w8 for one of 8 bytes:
// the kernels of ops that only move values (a transpose, a broadcast)
// take every dtype, moving the bits of its elements as uint32 or uint64.
func forWidth(dtype tensor.Dtype, w4, w8 func()) error {
	switch dtype {
	case graph.Float32, graph.Int32:
		w4()
	case graph.Float64, graph.Int64:
		w8()
	default:
		return fmt.Errorf("dtype %v is not supported (float32, float64, int32 or int64)", dtype)
	}
	return nil
}

// wideBlock is the number of elements a kernel widens to float64 at a
// time with widen; a buffer of them, 512 bytes, lives on the stack.
const wideBlock = 64

// widen sets dst[i] = float64(x[i*stride]) for each i of dst and returns
// dst. Kernels that call math (in float64) on float32 elements widen a
// block of at most wideBlock of them first and call math in a loop of its
// own. Widened in the same loop as the call, each conversion (CVTSS2SD,
// which merges into its destination register) can wait for the previous
// call's result in that register, and the calls, which otherwise overlap,
// run one after another: about 2× (Pow) to 5× (unary ops) slower than in
// float64. Softmax, the cross-entropies and LogSumExp do not need it: the
// compiler loads each of their elements (MOVSS, which writes the whole
// register) into the register it converts it in, so nothing waits, and
// they run in float32 as fast as in float64.
func widen[T float](dst []float64, x []T, stride int) []float64 {
	for i := range dst {
		dst[i] = float64(x[i*stride])
	}
	return dst
}

// maxRank bounds the rank of every op's inputs and output
// (graph.MaxRank), so that kernels keep index arithmetic on the stack and
// run without allocating.
const maxRank = graph.MaxRank

// walker visits the rows (runs along the last axis) of an output of shape
// out and, for each, the matching offsets into up to three inputs that
// broadcast to it. An input's stride along an axis is 0 where it is
// broadcast, so one inner loop serves every case.
type walker struct {
	rank    int
	shape   [maxRank]int
	strides [3][maxRank]int
	inner   [3]int // each input's stride along the last axis (0 or 1)
	// sequential marks a reduction's walker collapsed from rows of one
	// element: its rows must fold one element after another, as the
	// single-element rows did, not with several partial sums.
	sequential bool
}

func newWalker(out []int, ins ...[]int) walker {
	w := walker{rank: len(out)}
	copy(w.shape[:], out)
	for k, in := range ins {
		stride := 1
		for i := len(in) - 1; i >= 0; i-- {
			axis := i + len(out) - len(in)
			if in[i] != 1 {
				w.strides[k][axis] = stride
			}
			stride *= in[i]
		}
		if w.rank > 0 {
			w.inner[k] = w.strides[k][w.rank-1]
		}
	}
	return w
}

// newElementwiseWalker is newWalker for ops that compute each output
// element from the matching input elements alone, in any order (the
// elementwise ops, BroadcastTo, fused gathers): its axes are collapsed,
// so that its rows are as long as the layout allows.
func newElementwiseWalker(out []int, ins ...[]int) walker {
	w := newWalker(out, ins...)
	w.collapse()
	return w
}

// newReductionWalker is newWalker for reductions (input 0 the output,
// stride 0 along the reduced axes). Its rows fold with several partial
// sums, so changing them would change the sums' rounding; but where the
// last axis has extent 1, every row is one element, added to its output
// in memory order, and the walker collapses (rows of one element run at
// a fraction of the speed of any other layout) and marks itself
// sequential: its rows then add their elements one after another, the
// same additions in the same order.
func newReductionWalker(x []int, out []int) walker {
	v, _ := ContiguousView(x)
	return v.reductionWalker(out)
}

// reductionWalker is newReductionWalker for a reduction reading its
// operand, of v's shape, through v: input 1's strides are v's, so each
// row's elements lie at off[1] + j·inner[1] of the viewed tensor (for a
// contiguous view, off[1] is the row's own offset and inner[1] is 1).
func (v *View) reductionWalker(out []int) walker {
	w := newWalker(v.shape[:v.rank], out)
	w.strides[1] = v.strides
	if w.rank > 0 {
		w.inner[1] = w.strides[1][w.rank-1]
	}
	if w.rank > 1 && w.shape[w.rank-1] == 1 {
		w.collapse()
		w.sequential = true
	}
	return w
}

// collapse rewrites w to visit the same offsets in the same order with
// fewer, longer rows: it drops the output's size-1 axes and merges each
// axis into the next where every input steps across both as across one
// (stride[a] = stride[a+1]·shape[a+1], broadcast ones included). A
// (64, 64, 1) output of a (64, 1) input, say, becomes rows of 64 where it
// was 4,096 rows of one element. Rows change, so reductions, which fold
// a row at a time, keep their walker as it is.
func (w *walker) collapse() {
	r := 0
	for a := range w.rank {
		if w.shape[a] == 0 {
			return // nothing to visit; leave w as it is
		}
		if w.shape[a] == 1 {
			continue
		}
		if r > 0 && w.mergeable(r-1, a) {
			for k := range w.strides {
				w.strides[k][r-1] = w.strides[k][a]
			}
			w.shape[r-1] *= w.shape[a]
			continue
		}
		w.shape[r] = w.shape[a]
		for k := range w.strides {
			w.strides[k][r] = w.strides[k][a]
		}
		r++
	}
	for a := r; a < w.rank; a++ {
		w.shape[a] = 0
		for k := range w.strides {
			w.strides[k][a] = 0
		}
	}
	w.rank = r
	w.inner = [3]int{}
	if r > 0 {
		for k := range w.strides {
			w.inner[k] = w.strides[k][r-1]
		}
	}
}

// mergeable reports whether every input steps across the (already
// collapsed) axis a followed by axis b as across one axis.
func (w *walker) mergeable(a, b int) bool {
	for k := range w.strides {
		if w.strides[k][a] != w.strides[k][b]*w.shape[b] {
			return false
		}
	}
	return true
}

// rows calls fn once per output row with the row's output offset, its
// length and each input's offset.
func (w *walker) rows(fn func(out, n int, off [3]int)) {
	if w.rank == 0 {
		fn(0, 1, [3]int{})
		return
	}
	n := w.shape[w.rank-1]
	total := 1
	for _, d := range w.shape[:w.rank] {
		total *= d
	}
	if n == 0 || total == 0 {
		return
	}
	var idx [maxRank]int
	var off [3]int
	for o := 0; o < total; o += n {
		fn(o, n, off)
		// Advance the multi-index over the outer axes, odometer style.
		for a := w.rank - 2; a >= 0; a-- {
			idx[a]++
			for k := range off {
				off[k] += w.strides[k][a]
			}
			if idx[a] < w.shape[a] {
				break
			}
			for k := range off {
				off[k] -= w.strides[k][a] * idx[a]
			}
			idx[a] = 0
		}
	}
}

// checkRank rejects shapes beyond maxRank for broadcasting ops.
func checkRank(in []graph.Type) error {
	for _, t := range in {
		if t.Rank() > maxRank {
			return fmt.Errorf("rank %d is above the supported %d", t.Rank(), maxRank)
		}
	}
	return nil
}
