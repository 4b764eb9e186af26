package ops

import (
	"fmt"
	"math"
)

// Sizes computed from a user's dimensions, paddings, strides and
// dilations are checked for overflow: a sum or product that wrapped around
// could give a plausible shape for impossible settings (a padding of
// MaxInt made a convolution's output one element of zeros).

// addSizes returns the sum of non-negative sizes, or false when it
// overflows an int.
func addSizes(sizes ...int) (int, bool) {
	sum := 0
	for _, s := range sizes {
		if s > math.MaxInt-sum {
			return 0, false
		}
		sum += s
	}
	return sum, true
}

// mulSizes returns the product of non-negative sizes, or false when it
// overflows an int (as graph counts a shape's elements: a zero after the
// overflow does not save it).
func mulSizes(sizes ...int) (int, bool) {
	product := 1
	for _, s := range sizes {
		if s != 0 && product > math.MaxInt/s {
			return 0, false
		}
		product *= s
	}
	return product, true
}

// flops is the product of non-negative counts for a cost estimate, at
// most math.MaxInt64: an estimate saturates rather than wrapping around.
func flops(counts ...int) int64 {
	if p, ok := mulSizes(counts...); ok {
		return int64(p)
	}
	for _, c := range counts {
		if c == 0 {
			return 0
		}
	}
	return math.MaxInt64
}

// window is one spatial axis of a convolution or a pooling: an input of
// length in, padded by before and after, read by windows of k taps
// dilation apart that move by stride. The sizes are non-negative; k,
// stride and dilation are positive.
type window struct{ in, before, after, k, stride, dilation int }

// reach is the distance from a window's first tap to its last,
// dilation·(k-1). It is an error when the kernels' index arithmetic could
// overflow an int: every position they compute lies within the padded
// input, a stride and a reach.
func (a window) reach() (int, error) {
	reach, ok := mulSizes(a.dilation, a.k-1)
	if ok {
		_, ok = addSizes(a.in, a.before, a.after, a.stride, reach)
	}
	if !ok {
		return 0, fmt.Errorf("sizes overflow an int: input %d, padding %d and %d, kernel %d, stride %d, dilation %d",
			a.in, a.before, a.after, a.k, a.stride, a.dilation)
	}
	return reach, nil
}

// convOut is a convolution's output length: the windows inside the
// padded input, 0 when none fits.
func (a window) convOut() (int, error) {
	reach, err := a.reach()
	if err != nil {
		return 0, err
	}
	span := a.in + a.before + a.after - reach
	if span < 1 {
		return 0, nil
	}
	return (span-1)/a.stride + 1, nil
}

// poolOut is PyTorch's pooling output length (before and after are the
// same padding): windows whose first tap lies in the input or its left
// padding, all of them inside the padded input unless ceil is set.
func (a window) poolOut(ceil bool) (int, error) {
	reach, err := a.reach()
	if err != nil {
		return 0, err
	}
	span := a.in + a.before + a.after - reach - 1
	if ceil {
		span += a.stride - 1
	}
	if span < 0 {
		return 0, nil
	}
	out := span/a.stride + 1
	if ceil && (out-1)*a.stride >= a.in+a.before {
		out--
	}
	return out, nil
}

// transposedOut is the output length of a transposed convolution whose
// input has length a.in, (in-1)·stride - before - after + dilation·(k-1)
// + outPad + 1, as PyTorch's conv_transpose2d has it; 0 when that is not
// positive or the input or the kernel is empty.
func (a window) transposedOut(outPad int) (int, error) {
	if a.in < 1 || a.k < 1 { // for the convolution's checks to refuse
		return 0, nil
	}
	grown, ok := mulSizes(a.in-1, a.stride)
	reach, ok2 := mulSizes(a.dilation, a.k-1)
	total, ok3 := addSizes(grown, reach, outPad, 1)
	if !ok || !ok2 || !ok3 {
		return 0, fmt.Errorf("sizes overflow an int: input %d, stride %d, kernel %d, dilation %d, output padding %d",
			a.in, a.stride, a.k, a.dilation, outPad)
	}
	if pads, ok := addSizes(a.before, a.after); ok && pads < total {
		return total - pads, nil
	}
	return 0, nil
}
