package ops

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// expSumC is C declaring, for the n elements of in0 starting at the long
// long base, stride apart, double m, their maximum (NaN if any is), and
// double s, the sum of exp(x - m), as expSum computes them (in double);
// with store it writes each exp(x - m), rounded to T, at the same place
// of out0.
func expSumC(n, stride int, store bool) string {
	at := rowElemC(stride)
	st := ""
	if store {
		st = fmt.Sprintf("out0[%s] = (T)e;\n", at)
	}
	return fmt.Sprintf(`double m = -(double)nb_red_inf();
for (long long k = 0; k < %[1]dLL; k++) m = nb_red_maxd(m, (double)in0[%[2]s]);
double s = 0;
for (long long k = 0; k < %[1]dLL; k++) {
const double e = exp((double)in0[%[2]s] - m);
%[3]ss += e;
}
`, n, at, st)
}

// rowElemC is the C offset of element k of a row starting at base, its
// elements stride apart.
func rowElemC(stride int) string {
	if stride == 1 {
		return "base + k"
	}
	return fmt.Sprintf("base + k * %dLL", stride)
}

// CUDA is the softmax's GPU kernel (graph.CUDAKernel): one work item per
// row along the axis, computing as Forward does in double (the maximum,
// the exponentials and their sum), a softmax dividing each exponential
// rounded to T by the sum rounded to T, a log-softmax subtracting
// max + log(sum) from each element.
func (op softmaxOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	if err := checkFloatCUDA(op.Name()+" input", in[0]); err != nil {
		return nil, err
	}
	outer, n, inner := splitAxis(in[0].Shape, op.axis)
	base := fmt.Sprintf("i * %dLL", n)
	if inner != 1 {
		base = fmt.Sprintf("i / %[1]dLL * %[2]dLL + i %% %[1]dLL", inner, int64(n)*int64(inner))
	}
	at := rowElemC(inner)
	body := "const long long base = " + base + ";\n" + expSumC(n, inner, !op.log)
	if op.log {
		body += fmt.Sprintf("const double shift = m + log(s);\n"+
			"for (long long k = 0; k < %dLL; k++) out0[%s] = (T)((double)in0[%[2]s] - shift);\n", n, at)
	} else {
		body += fmt.Sprintf("for (long long k = 0; k < %dLL; k++) out0[%s] /= (T)s;\n", n, at)
	}
	return []graph.CUDASource{{N: int64(outer) * int64(inner), Body: body, Helpers: reduceHelpersC, Work: 3 * int64(n)}}, nil
}

// CUDA is the cross-entropy's GPU kernel (graph.CUDAKernel): one work
// item per example, computing as Forward does in double. A label that is
// not a class index, which makes Forward fail, gives the example a NaN
// loss and marks the run as failed (FAULT).
func (crossEntropyOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	if err := checkFloatCUDA("CrossEntropy logits", in[0]); err != nil {
		return nil, err
	}
	classes := in[0].Shape[1]
	body := fmt.Sprintf("const long long base = i * %dLL;\n", classes) + expSumC(classes, 1, false) +
		"const long long c = " + classIndexC(in[1], "in1[i]", classes) + ";\n" +
		"if (c < 0) FAULT();\n" +
		"out0[i] = c < 0 ? nb_red_nan() : (T)(m + log(s) - (double)in0[base + c]);\n"
	return []graph.CUDASource{{N: int64(out[0].Size()), Body: body, Helpers: reduceHelpersC, Work: 2 * int64(classes)}}, nil
}

// CUDA is the one-hot cross-entropy's GPU kernel (graph.CUDAKernel): one
// work item per example, computing as Forward does in double, classes
// with a zero target adding nothing.
func (crossEntropyOneHotOp) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	if err := checkFloatCUDA("CrossEntropyOneHot logits", in[0]); err != nil {
		return nil, err
	}
	classes := in[0].Shape[1]
	body := fmt.Sprintf("const long long base = i * %dLL;\n", classes) + expSumC(classes, 1, false) +
		fmt.Sprintf(`const double lse = m + log(s);
double loss = 0;
for (long long k = 0; k < %dLL; k++) {
const T t = in1[base + k];
if (t != (T)0) loss += (double)t * (lse - (double)in0[base + k]);
}
out0[i] = (T)loss;
`, classes)
	return []graph.CUDASource{{N: int64(out[0].Size()), Body: body, Helpers: reduceHelpersC, Work: 3 * int64(classes)}}, nil
}
