package ops

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nabla-go/nabla/graph"
)

// channelSumC is C adding, into the double acc it declares, term (a C
// expression of the long long o) over the offsets o of channel i's
// elements in tensors (n, c, s...) of s elements per plane.
func channelSumC(acc string, n, c, s int, term string) string {
	return fmt.Sprintf(`double %[1]s = 0;
for (long long p = 0; p < %[2]dLL; p++) {
const long long base = p * %[3]dLL + i * %[4]dLL;
for (long long k = 0; k < %[4]dLL; k++) {
const long long o = base + k;
%[1]s += %[5]s;
}
}
`, acc, n, int64(c)*int64(s), s, term)
}

// CUDA is the channel op's GPU kernel (graph.CUDAKernel). The reductions
// have one work item per channel, adding its terms in double where
// Forward adds each plane in T and the planes in double; each term (a
// product, a deviation) is computed in T as Forward does. The affine maps
// and BatchNorm have one work item per element, computing in T as Forward
// does (BatchNorm's factor w/√(var + eps) in double, then rounded).
func (op channelOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	if err := checkFloatCUDA(op.Name()+" input", in[0]); err != nil {
		return nil, err
	}
	shape := in[0].Shape
	n, c, s := shape[0], shape[1], 1
	for _, d := range shape[2:] {
		s *= d
	}
	count := float64(n) * float64(s)
	sum := func(acc, term string) string { return channelSumC(acc, n, c, s, term) }
	var body string
	switch op.kind {
	case channelSumKind:
		body = sum("acc", "(double)in0[o]") + "out0[i] = (T)acc;\n"
	case channelMeanKind:
		body = sum("acc", "(double)in0[o]") + fmt.Sprintf("out0[i] = (T)(acc / %v);\n", cDouble(count))
	case channelDotKind:
		term := "(double)(in0[o] * in1[o])"
		if op.centred {
			term = "(double)(in0[o] * (in1[o] - in2[i]))"
		}
		body = sum("acc", term) + "out0[i] = (T)acc;\n"
	case channelCovKind:
		body = sum("su", "(double)in0[o]") + sum("sv", "(double)in1[o]") +
			fmt.Sprintf("const T mu = (T)(su / %[1]s), mv = (T)(sv / %[1]s);\n", cDouble(count)) +
			sum("acc", "(double)((in0[o] - mu) * (in1[o] - mv))") +
			fmt.Sprintf("out0[i] = (T)(acc / %s);\n", cDouble(count))
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
