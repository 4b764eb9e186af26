package ops

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nabla-go/nabla/graph"
)

// channelOffsetC is the C expression of the offset of term t (a long
// long) of channel r in tensors (n, c, s...) of s elements per plane: the
// terms of a channel are its elements in memory order.
func channelOffsetC(c, s int) string {
	if s == 1 {
		return fmt.Sprintf("t * %dLL + r", c)
	}
	return fmt.Sprintf("t / %[1]dLL * %[2]dLL + r * %[1]dLL + t %% %[1]dLL", s, int64(c)*int64(s))
}

// CUDA is the channel op's GPU kernel (graph.CUDAKernel). The reductions
// add a channel's terms in double (split over chunks when long: see
// splitSum) where Forward adds each plane in T and the planes in double;
// each term (a product, a deviation) is computed in T as Forward does.
// ChannelCov takes three sums: both means, then the centred products. The
// affine maps and BatchNorm have one work item per element, computing in
// T as Forward does (BatchNorm's factor w/√(var + eps) in double, then
// rounded).
func (op channelOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	if err := checkFloatCUDA(op.Name()+" input", in[0]); err != nil {
		return nil, err
	}
	shape := in[0].Shape
	n, c, s := shape[0], shape[1], 1
	for _, d := range shape[2:] {
		s *= d
	}
	count := cDouble(float64(n) * float64(s))
	split := newSplitSum(int64(c), int64(n)*int64(s))
	term := func(t string) string { return "const long long o = " + channelOffsetC(c, s) + ";\nacc += " + t + ";" }
	sum := func(setup, t, final string, extra int64) []graph.CUDASource {
		return split.kernels(setup, term(t), final, extra, "")
	}
	var body string
	switch op.kind {
	case channelSumKind:
		return sum("", "(double)in0[o]", "out0[i] = (T)acc;\n", 0), nil
	case channelMeanKind:
		return sum("", "(double)in0[o]", fmt.Sprintf("out0[i] = (T)(acc / %s);\n", count), 0), nil
	case channelDotKind:
		t := "(double)(in0[o] * in1[o])"
		if op.centred {
			t = "(double)(in0[o] * (in1[o] - in2[r]))"
		}
		return sum("", t, "out0[i] = (T)acc;\n", 0), nil
	case channelCovKind:
		// The means, rounded to T, go to the scratch after the partial
		// sums, for the third sum to read.
		mu, mv := fmt.Sprintf("scratch[%dLL + r]", split.scratch()), fmt.Sprintf("scratch[%dLL + r]", split.scratch()+int64(c))
		mean := func(m string) string { return fmt.Sprintf("%s = (double)(T)(acc / %s);\n", m, count) }
		return slices.Concat(
			sum("", "(double)in0[o]", mean(mu), 2*int64(c)),
			sum("", "(double)in1[o]", mean(mv), 2*int64(c)),
			sum(fmt.Sprintf("const T mu = (T)%s, mv = (T)%s;\n", mu, mv), "(double)((in0[o] - mu) * (in1[o] - mv))",
				fmt.Sprintf("out0[i] = (T)(acc / %s);\n", count), 2*int64(c)),
		), nil
	case channelAffineKind:
		body = fmt.Sprintf("const long long ch = i / %dLL %% %dLL;\n", s, c)
		switch {
		case op.unit:
			body += "out0[i] = in0[i] + in1[ch];\n"
		case op.terms == 1:
			body += "T y = in0[i] * in1[ch];\n"
		default:
			body += "T y = in0[i] * in2[ch];\nconst T t = in1[i] * in3[ch];\ny = y + t;\n"
		}
		if !op.unit {
			if op.bias {
				body += fmt.Sprintf("y = y + in%d[ch];\n", 2*op.terms)
			}
			body += "out0[i] = y;\n"
		}
	case batchNormKind:
		body = fmt.Sprintf("const long long ch = i / %dLL %% %dLL;\n", s, c) +
			fmt.Sprintf("const T a = (T)((double)in3[ch] / sqrt((double)in2[ch] + %s));\n", cDouble(op.eps)) +
			"T y = in0[i] - in1[ch];\ny = y * a;\nout0[i] = y + in4[ch];\n"
	default:
		return nil, fmt.Errorf("no kernel for %s", op.Name())
	}
	return []graph.CUDASource{{N: int64(out[0].Size()), Body: body}}, nil
}

// cDouble is v (finite) as a C double literal of the same value.
func cDouble(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}
