package onnx

import (
	"math"

	"github.com/nabla-go/nabla/graph"
)

// exportMaxPoolSelection writes max pooling's gradient ops, which route
// values through each window's argmax (its first maximum, in the window's
// row-major order, as ops' kernel picks it): MaxPool2DGrad(x, g) adds g at
// the argmaxes (x's shape), MaxPool2DGather(x, G) reads G there (the
// pooled shape). ONNX has no such op: for each tap of the window the
// strided slice of x (padded with -∞) is compared with the window's
// maximum, the first match becomes a one-hot selection, and the values
// move through it: gathered with strided slices, or spread back by a
// stride-s transposed convolution of a one kernel and padding.
func exportMaxPoolSelection(s *step) error {
	p := s.a.Pool
	x := s.inType(0)
	H, W := x.Shape[2], x.Shape[3]
	pooled := s.inType(1).Shape // MaxPool2DGrad's g
	if s.n.OpName() == "MaxPool2DGather" {
		pooled = s.n.Shape()
	}
	oh, ow := pooled[2], pooled[3]
	// Padding, more at the end where a last window (ceil mode) reaches past it.
	padEnd := [2]int{
		max(p.Padding[0], (oh-1)*p.Stride[0]+(p.Kernel[0]-1)*p.Dilation[0]+1-H-p.Padding[0]),
		max(p.Padding[1], (ow-1)*p.Stride[1]+(p.Kernel[1]-1)*p.Dilation[1]+1-W-p.Padding[1]),
	}
	lowest := -math.MaxFloat64
	if x.DType == graph.Float32 {
		lowest = -math.MaxFloat32
	}
	padded := func(v string, fill float64) string {
		return s.tmp("Pad", []string{v, s.e.ints(s.out+"/pads", []int{0, 0, p.Padding[0], p.Padding[1], 0, 0, padEnd[0], padEnd[1]}),
			s.e.scalarConst(s.out+"/fill", x, fill)})
	}
	tap := func(v string, i, j int) string {
		return s.tmp("Slice", []string{v,
			s.e.ints(s.out+"/starts", []int{i * p.Dilation[0], j * p.Dilation[1]}),
			s.e.ints(s.out+"/ends", []int{i*p.Dilation[0] + (oh-1)*p.Stride[0] + 1, j*p.Dilation[1] + (ow-1)*p.Stride[1] + 1}),
			s.e.ints(s.out+"/axes", []int{2, 3}), s.e.ints(s.out+"/steps", p.Stride)})
	}
	xp := padded(s.in[0], lowest)
	var taps []string
	for i := range p.Kernel[0] {
		for j := range p.Kernel[1] {
			taps = append(taps, tap(xp, i, j))
		}
	}
	maximum := taps[0]
	if len(taps) > 1 {
		maximum = s.tmp("Max", taps)
	}
	one := s.e.scalarConst(s.out+"/one", x, 1)
	notYet := one // 1 until a window's first maximum is met
	var gp string
	if s.n.OpName() == "MaxPool2DGather" {
		gp = padded(s.in[1], 0)
	}
	var sum string
	add := func(v string) {
		if sum == "" {
			sum = v
		} else {
			sum = s.tmp("Add", []string{sum, v})
		}
	}
	channels := x.Shape[1]
	ones, _ := graph.FromFloat64s(x.DType, repeat(channels, 1.0), channels, 1, 1, 1)
	kernel := s.e.constant(s.out+"/ones", graph.TypeOf(x.DType, channels, 1, 1, 1), ones, s.n.Site())
	Hp, Wp := H+p.Padding[0]+padEnd[0], W+p.Padding[1]+padEnd[1]
	for k, t := range taps {
		i, j := k/p.Kernel[1], k%p.Kernel[1]
		eq := s.tmp("Cast", []string{s.tmp("Equal", []string{t, maximum})}, attrInt("to", int(elemType(x.DType))))
		first := s.tmp("Mul", []string{eq, notYet})
		notYet = s.tmp("Mul", []string{notYet, s.tmp("Sub", []string{one, eq})})
		if gp != "" { // read G at the selection
			add(s.tmp("Mul", []string{first, tap(gp, i, j)}))
			continue
		}
		// Spread g·selection back: stride-s zeros between, then the tap's offset.
		spread := s.tmp("ConvTranspose", []string{s.tmp("Mul", []string{first, s.in[1]}), kernel},
			attrInts("strides", p.Stride), attrInt("group", channels), attrInts("kernel_shape", []int{1, 1}))
		before := []int{i * p.Dilation[0], j * p.Dilation[1]}
		after := []int{Hp - before[0] - ((oh-1)*p.Stride[0] + 1), Wp - before[1] - ((ow-1)*p.Stride[1] + 1)}
		add(s.tmp("Pad", []string{spread, s.e.ints(s.out+"/pads", []int{0, 0, before[0], before[1], 0, 0, after[0], after[1]})}))
	}
	if gp != "" {
		return s.final("Identity", []string{sum})
	}
	return s.final("Slice", []string{sum, s.e.ints(s.out+"/starts", p.Padding[:2]),
		s.e.ints(s.out+"/ends", []int{p.Padding[0] + H, p.Padding[1] + W}), s.e.ints(s.out+"/axes", []int{2, 3})})
}
