package onnx

import (
	"fmt"
	"math"
	"sort"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Resize: nearest, linear and cubic interpolation are separable, so each
// resized axis is a product with an (in, out) matrix computed at import
// from the static sizes, following ONNX's reference implementation
// (neighbours clamped to the edge). The result differentiates like any
// product.
func init() {
	register(map[string]importFunc{"Resize": one(importResize)})
	accept(map[string]attrs{"Resize": {
		"antialias":                      onlyInts(0).opsets(18, 0),
		"axes":                           {from: 18},
		"coordinate_transformation_mode": onlyStrings("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric").opsets(11, 0),
		"cubic_coeff_a":                  {from: 11},
		"exclude_outside":                {from: 11},
		// extrapolation_value fills tf_crop_and_resize's outside, which is refused.
		"extrapolation_value":      {from: 11},
		"keep_aspect_ratio_policy": onlyStrings("stretch").opsets(18, 0),
		"mode":                     onlyStrings("nearest", "linear", "cubic"),
		"nearest_mode":             onlyStrings("round_prefer_floor", "round_prefer_ceil", "floor", "ceil").opsets(11, 0),
	}})
}

func importResize(c *nodeContext) (*graph.Node, error) {
	x, err := c.input(0)
	if err != nil {
		return nil, err
	}
	// antialias is 0 and keep_aspect_ratio_policy "stretch": the table
	// refuses others.
	rank := x.Type().Rank()
	axes := c.attrInts("axes")
	if axes == nil {
		for i := range rank {
			axes = append(axes, i)
		}
	}
	scalesAt, sizesAt := 2, 3
	if c.im.opset < 11 {
		scalesAt, sizesAt = 1, -1
	}
	var scales []float64
	if c.optional(scalesAt) != nil && c.in[scalesAt].Type().Size() > 0 {
		v, err := c.known(scalesAt)
		if err != nil {
			return nil, err
		}
		scales = graph.Float64s(v)
	}
	var sizes []int
	if sizesAt > 0 && c.optional(sizesAt) != nil && c.in[sizesAt].Type().Size() > 0 {
		if sizes, err = c.knownInts(sizesAt); err != nil {
			return nil, err
		}
	}
	if (scales == nil) == (sizes == nil) || (scales != nil && len(scales) != len(axes)) || (sizes != nil && len(sizes) != len(axes)) {
		return nil, fmt.Errorf("want scales or sizes, one value per axis of %v, got scales %v and sizes %v", axes, scales, sizes)
	}
	r := resizer{ // the values the table accepts
		mode:       c.attrString("mode", "nearest"),
		coords:     "asymmetric", // opset 10's
		nearest:    "floor",
		cubicA:     c.attrFloat("cubic_coeff_a", -0.75),
		excludeOut: c.attrInt("exclude_outside", 0) != 0,
	}
	if c.im.opset >= 11 {
		r.coords, r.nearest = c.attrString("coordinate_transformation_mode", "half_pixel"), c.attrString("nearest_mode", "round_prefer_floor")
	}
	// The output's size, against the memory limit, before any matrix.
	outShape := append([]int(nil), x.Shape()...)
	for i, a := range axes {
		a, err := graph.NormalizeAxis(a, rank)
		if err != nil {
			return nil, err
		}
		if sizes != nil {
			outShape[a] = sizes[i]
		} else if f := math.Floor(float64(outShape[a]) * scales[i]); f >= 0 && f < 1<<40 {
			outShape[a] = int(f)
		} else {
			return nil, fmt.Errorf("scale %v for axis %d of size %d", scales[i], a, outShape[a])
		}
	}
	if _, err := shapeOf(int64s(outShape), x.DType()); err != nil {
		return nil, fmt.Errorf("output: %v", err)
	}
	y := x
	for i, a := range axes {
		if a, err = graph.NormalizeAxis(a, rank); err != nil {
			return nil, err
		}
		in := x.Shape()[a]
		var out int
		var scale float64
		if sizes != nil {
			out = sizes[i]
			scale = float64(out) / float64(in)
		} else {
			scale = scales[i]
			out = int(math.Floor(float64(in) * scale))
		}
		if out < 0 || scale <= 0 || in == 0 {
			return nil, fmt.Errorf("axis %d of size %d resized to %d (scale %v)", a, in, out, scale)
		}
		if _, err := shapeOf([]int64{int64(in), int64(out)}, graph.Float64); err != nil { // the matrix is computed in float64
			return nil, err
		}
		m, identity, err := r.matrix(in, out, scale)
		if err != nil {
			return nil, err
		}
		if identity {
			continue
		}
		t, err := graph.FromFloat64s(x.DType(), m, in, out)
		if err != nil {
			return nil, err
		}
		if y, err = alongAxis(y, a, c.g().Const(t)); err != nil {
			return nil, err
		}
	}
	return ops.Identity(y), nil
}

// alongAxis multiplies axis a of x by m (in, out).
func alongAxis(x *graph.Node, a int, m *graph.Node) (*graph.Node, error) {
	rank := x.Type().Rank()
	perm := make([]int, 0, rank)
	for i := range rank {
		if i != a {
			perm = append(perm, i)
		}
	}
	perm = append(perm, a)
	back := make([]int, rank)
	for i, p := range perm {
		back[p] = i
	}
	y, err := matmul(ops.Transpose(x, perm...), m)
	if err != nil {
		return nil, err
	}
	return ops.Transpose(y, back...), nil
}

// resizer holds a Resize's settings.
type resizer struct {
	mode, coords, nearest string
	cubicA                float64
	excludeOut            bool
}

// matrix returns the (in, out) matrix of one axis, row-major, and whether
// it is the identity.
func (r resizer) matrix(in, out int, scale float64) ([]float64, bool, error) {
	m := make([]float64, in*out)
	identity := in == out
	for j := range out {
		xo, err := r.original(float64(j), in, out, scale)
		if err != nil {
			return nil, false, err
		}
		floor := math.Floor(xo)
		ratio := xo - floor
		if xo == floor {
			ratio = 1
		}
		coeffs := r.coeffs(ratio)
		n := len(coeffs)
		idx := neighbours(xo, n)
		if r.excludeOut {
			sum := 0.0
			for k, i := range idx {
				if i < 0 || i >= in {
					coeffs[k] = 0
				}
				sum += coeffs[k]
			}
			for k := range coeffs {
				if sum != 0 {
					coeffs[k] /= sum
				}
			}
		}
		for k, i := range idx {
			i = min(max(i, 0), in-1) // the edge, as the reference pads
			m[i*out+j] += coeffs[k]
			if coeffs[k] != 0 && (i != j || coeffs[k] != 1) {
				identity = false
			}
		}
	}
	return m, identity, nil
}

// original maps output coordinate x to the input's.
func (r resizer) original(x float64, in, out int, scale float64) (float64, error) {
	switch r.coords {
	case "half_pixel":
		return (x+0.5)/scale - 0.5, nil
	case "pytorch_half_pixel":
		if out == 1 {
			return -0.5, nil
		}
		return (x+0.5)/scale - 0.5, nil
	case "align_corners":
		if out == 1 {
			return 0, nil
		}
		return x * float64(in-1) / (scale*float64(in) - 1), nil
	case "asymmetric":
		return x / scale, nil
	}
	return 0, unsupported("coordinate_transformation_mode %q", r.coords)
}

// coeffs are the weights of the neighbours of a point ratio past the one
// on its left (ratio in (0, 1]).
func (r resizer) coeffs(ratio float64) []float64 {
	switch r.mode {
	case "linear":
		return []float64{1 - ratio, ratio}
	case "cubic":
		a := r.cubicA
		f := func(s float64) float64 { // |s| in [1, 2)
			return ((a*s-5*a)*s+8*a)*s - 4*a
		}
		g := func(s float64) float64 { // |s| in [0, 1)
			return ((a+2)*s-(a+3))*s*s + 1
		}
		return []float64{f(ratio + 1), g(ratio), g(1 - ratio), f(2 - ratio)}
	}
	if ratio == 1 {
		return []float64{0, 1}
	}
	pick := map[string]bool{
		"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5, "floor": false, "ceil": true,
	}[r.nearest]
	if pick {
		return []float64{0, 1}
	}
	return []float64{1, 0}
}

// neighbours are the n integers nearest x, the smaller first among equals,
// in increasing order.
func neighbours(x float64, n int) []int {
	base := int(math.Floor(x))
	var cand []int
	for i := base - n; i <= base+n; i++ {
		cand = append(cand, i)
	}
	sort.Slice(cand, func(i, j int) bool {
		di, dj := math.Abs(x-float64(cand[i])), math.Abs(x-float64(cand[j]))
		if di != dj {
			return di < dj
		}
		return cand[i] < cand[j]
	})
	idx := cand[:n]
	sort.Ints(idx)
	return idx
}
