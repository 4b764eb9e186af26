package ops

import (
	"fmt"
	"strings"

	"github.com/nabla-go/nabla/graph"
)

// reduceHelpersC are the C helpers of the GPU kernels of the reductions,
// the softmaxes, the cross-entropies and the one-hot encoding. Every
// kernel of these ops carries all of them, so that a module holding
// several of them defines each once.
var reduceHelpersC = specialValuesC("nb_red") + `
/* the larger of m and v, or NaN if either is (once m is NaN it stays NaN) */
static DEVICE inline T nb_red_max(T m, T v) { return (v > m || v != v) ? v : m; }
static DEVICE inline double nb_red_maxd(double m, double v) { return (v > m || v != v) ? v : m; }
/* x is neither infinite nor NaN */
static DEVICE inline int nb_red_finite(T x) { return x - x == (T)0; }
/* a label as a class index in [0,n), or -1 when it is not one */
static DEVICE inline long long nb_red_class_i64(long long v, long long n) { return v >= 0 && v < n ? v : -1; }
static DEVICE inline long long nb_red_class_f(double v, long long n) {
	return v >= 0 && v < (double)n && v == trunc(v) ? (long long)v : -1;
}`

// specialValuesC defines, for the helpers of a family of kernels, prefix_inf()
// and prefix_nan(), +Inf and a NaN of type T: NVRTC has no INFINITY or NAN
// (it reads no system header), so the device builds them from their bits.
func specialValuesC(prefix string) string {
	return fmt.Sprintf(`#ifdef NABLA_HOST
static DEVICE inline T %[1]s_inf(void) { return (T)(1.0 / 0.0); }
static DEVICE inline T %[1]s_nan(void) { return (T)(0.0 / 0.0); }
#else
static DEVICE inline T %[1]s_inf(void) { return (T)__longlong_as_double(0x7ff0000000000000LL); }
static DEVICE inline T %[1]s_nan(void) { return (T)__longlong_as_double(0x7ff8000000000000LL); }
#endif`, prefix)
}

// classIndexC is the C expression of label v (a C expression of dtype
// dtype: int32, int64 or a float) as a class index in [0,classes), or -1
// when it is not one, as classIndex decides.
func classIndexC(dtype graph.Type, v string, classes int) string {
	if graph.IsInteger(dtype.DType) {
		return fmt.Sprintf("nb_red_class_i64((long long)%s, %dLL)", v, classes)
	}
	return fmt.Sprintf("nb_red_class_f((double)%s, %dLL)", v, classes)
}

// checkFloatCUDA says why a kernel does not take a value of type t: its
// dtype is not float32 or float64.
func checkFloatCUDA(what string, t graph.Type) error {
	if !graph.IsFloat(t.DType) {
		return fmt.Errorf("%s of dtype %v: no kernel (float32 or float64)", what, t.DType)
	}
	return nil
}

// axisRun is an axis of a reduction's input, or several adjacent ones
// merged: its size and its stride in the input.
type axisRun struct{ size, stride int64 }

// reduceLayout is the index arithmetic of a reduction kernel, one work
// item per output element looping over the input elements it combines.
// Axes of size 1 are dropped and adjacent axes that are both kept or both
// reduced, and stepped across as one, are merged, so that there are as
// few loops as can be.
type reduceLayout struct {
	kept    []axisRun // the output's axes, outermost first
	reduced []axisRun // the combined axes, outermost first
	offset  int64     // the input offset of the first element
}

// newReduceLayout is the layout of a reduction of a value of the given
// shape over axes (a bitmask, bit a for axis a); the output's elements
// are the kept axes' in row-major order.
func newReduceLayout(shape []int, axes uint64) reduceLayout {
	v, _ := ContiguousView(shape)
	return v.reduceLayout(axes)
}

// reduceLayout is newReduceLayout for a reduction reading its operand
// through v (of rank at most maxRank): the input offsets are v's.
func (v *View) reduceLayout(axes uint64) reduceLayout {
	var runs []axisRun
	var reduced []bool
	for a := v.rank - 1; a >= 0; a-- {
		d, r, stride := int64(v.shape[a]), axes&(1<<a) != 0, int64(v.strides[a])
		switch n := len(runs); {
		case d == 1:
		case n > 0 && reduced[n-1] == r && runs[n-1].stride*runs[n-1].size == stride:
			runs[n-1].size *= d // stepped across as one with the run inside it
		default:
			runs = append(runs, axisRun{d, stride})
			reduced = append(reduced, r)
		}
	}
	l := reduceLayout{offset: int64(v.offset)}
	for k := len(runs) - 1; k >= 0; k-- {
		if reduced[k] {
			l.reduced = append(l.reduced, runs[k])
		} else {
			l.kept = append(l.kept, runs[k])
		}
	}
	return l
}

// count is the number of elements each output combines.
func (l reduceLayout) count() int64 {
	n := int64(1)
	for _, r := range l.reduced {
		n *= r.size
	}
	return n
}

// baseC is the C expression of the input offset of the first element
// that output element i (the C variable named so) combines.
func (l reduceLayout) baseC(i string) string {
	if l.offset != 0 {
		return fmt.Sprintf("%dLL + %s", l.offset, runsOffsetC(l.kept, i))
	}
	return runsOffsetC(l.kept, i)
}

// termC is the C expression of the input offset of the element that
// output element r combines as its term t (r and t C variables), terms
// in memory order.
func (l reduceLayout) termC(r, t string) string {
	if len(l.reduced) == 0 {
		return l.baseC(r)
	}
	return l.baseC(r) + " + " + runsOffsetC(l.reduced, t)
}

// runsOffsetC is the C expression of the offset of element i (a C
// variable) of the axes runs, in row-major order.
func runsOffsetC(runs []axisRun, i string) string {
	var terms []string
	outStride := int64(1)
	for k := len(runs) - 1; k >= 0; k-- {
		r := runs[k]
		t := i
		if outStride != 1 {
			t = fmt.Sprintf("(%s / %dLL)", i, outStride)
		}
		if k > 0 {
			t = fmt.Sprintf("(%s %% %dLL)", t, r.size)
		}
		if r.stride != 1 {
			t = fmt.Sprintf("%s * %dLL", t, r.stride)
		}
		terms = append(terms, t)
		outStride *= r.size
	}
	if len(terms) == 0 {
		return "0"
	}
	return strings.Join(terms, " + ")
}

// loopC is C running body once for each input element that output element i
// combines, in increasing memory order, with the long long variable off
// holding its offset; the block declares base, the offset of the first.
func (l reduceLayout) loopC(off, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{\nconst long long base = %s;\n", l.baseC("i"))
	prev := "base"
	for k, r := range l.reduced {
		fmt.Fprintf(&b, "for (long long j%d = 0; j%d < %dLL; j%d++) {\n", k, k, r.size, k)
		v := fmt.Sprintf("o%d", k)
		if r.stride == 1 {
			fmt.Fprintf(&b, "const long long %s = %s + j%d;\n", v, prev, k)
		} else {
			fmt.Fprintf(&b, "const long long %s = %s + j%d * %dLL;\n", v, prev, k, r.stride)
		}
		prev = v
	}
	fmt.Fprintf(&b, "const long long %s = %s;\n%s\n", off, prev, body)
	b.WriteString(strings.Repeat("}\n", len(l.reduced)+1))
	return b.String()
}

// CUDA is the reduction's GPU kernel (graph.CUDAKernel): one work item per
// output element, looping over the elements it combines in memory order,
// as Forward does. Sums and means add in double, split over chunks when
// long (see splitSum), then round to T; a mean then scales by 1/count
// rounded to T, as Forward does. A maximum starts at -Inf and
// keeps the first NaN; a log-sum-exp then adds exp(x - max) in double
// and leaves an infinite or NaN maximum as it is.
func (op reduceOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	if err := checkFloatCUDA(op.Name()+" input", in[0]); err != nil {
		return nil, err
	}
	if in[0].Rank() > maxRank {
		return nil, fmt.Errorf("rank %d is above %d", in[0].Rank(), maxRank)
	}
	return op.cudaKernels(newReduceLayout(in[0].Shape, op.axes), out)
}

// cudaKernels are the reduction's kernels over the input elements of
// layout l.
func (op reduceOp) cudaKernels(l reduceLayout, out []graph.Type) ([]graph.CUDASource, error) {
	var body string
	work := l.count()
	switch op.kind {
	case reduceSum, reduceMean:
		scale := ""
		if n := l.count(); op.kind == reduceMean && n > 0 {
			scale = fmt.Sprintf("s *= (T)1 / (T)%dLL;\n", n)
		}
		split := newSplitSum(int64(out[0].Size()), l.count())
		return split.kernels("", "acc += (double)in0["+l.termC("r", "t")+"];", "T s = (T)acc;\n"+scale+"out0[i] = s;\n", 0, reduceHelpersC), nil
	case reduceMax, reduceLogSumExp:
		body = "T m = -nb_red_inf();\n" + l.loopC("o", "m = nb_red_max(m, in0[o]);")
		if op.kind == reduceLogSumExp {
			body += "if (nb_red_finite(m)) {\ndouble s = 0;\n" +
				l.loopC("o", "s += exp((double)(in0[o] - m));") +
				"m = (T)((double)m + log(s));\n}\n"
			work *= 2
		}
		body += "out0[i] = m;\n"
	default:
		return nil, fmt.Errorf("no kernel for %s", op.Name())
	}
	return []graph.CUDASource{{N: int64(out[0].Size()), Body: body, Helpers: reduceHelpersC, Work: work}}, nil
}

// CUDA is SumTo's GPU kernel (graph.CUDAKernel): the sum of x over its
// extra leading axes and the axes where the target has 1, one work item
// per output element, as reduceOp's sum does.
func (op sumToOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	x, to := in[0], out[0]
	if err := checkFloatCUDA("SumTo input", x); err != nil {
		return nil, err
	}
	if x.Rank() > maxRank || x.Rank() < to.Rank() {
		return nil, fmt.Errorf("no kernel summing %s to %s", graph.ShapeString(x.Shape), graph.ShapeString(to.Shape))
	}
	return sumToReduction(x.Shape, to.Shape).CUDA(in, out)
}

// sumToReduction is the sum that sums a value of shape x to shape to:
// over x's extra leading axes and the axes where to has 1.
func sumToReduction(x, to []int) reduceOp {
	lead := len(x) - len(to)
	var axes uint64
	for a := range x {
		if a < lead || to[a-lead] == 1 {
			axes |= 1 << a
		}
	}
	return reduceOp{kind: reduceSum, axes: axes, keep: true}
}

// CUDA is the GPU kernel (graph.CUDAKernel) of a reduction read through a
// view: the reduction's, its input offsets the view's, so that each
// output combines the same elements in the same order.
func (op readThroughOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	if err := checkFloatCUDA(op.Name()+" input", in[0]); err != nil {
		return nil, err
	}
	r, ok := op.op.(reduceOp)
	if !ok {
		r = sumToReduction(op.view.shape[:op.view.rank], out[0].Shape)
	}
	return r.cudaKernels(op.view.reduceLayout(r.axes), out)
}
