package ops

import (
	"fmt"
	"strconv"

	"github.com/nabla-go/nabla/graph"
)

// ElementwiseC returns the C expression (CUDA C as well) computing an
// elementwise op (IsElementwise) of the operand expressions args, in
// float32 or float64: the GPU backend's code generator writes fused groups
// with it. The expressions follow the CPU kernels: NaN propagates through
// Maximum and Minimum, which order -0 below +0; ReLU keeps NaN and turns -0
// into +0; Sign keeps ±0 and NaN; Sigmoid and Softplus are the overflow-free
// forms; comparisons give 1 or 0. They call the helpers of ElementwiseCPrelude.
// Its errors name it, the op and what is wrong.
func ElementwiseC(op graph.Op, args []string, f32 bool) (string, error) {
	c, err := elementwiseC(op, args, f32)
	if err != nil {
		return "", fmt.Errorf("ElementwiseC: %w", err)
	}
	return c, nil
}

// elementwiseC is ElementwiseC.
func elementwiseC(op graph.Op, args []string, f32 bool) (string, error) {
	f := func(name string) string { // libm's name for the dtype
		if f32 {
			return name + "f"
		}
		return name
	}
	lit := func(c float64) string {
		s := strconv.FormatFloat(c, 'g', -1, 64)
		if f32 {
			s = strconv.FormatFloat(float64(float32(c)), 'g', -1, 32)
		}
		if _, err := strconv.Atoi(s); err == nil {
			s += ".0"
		}
		if f32 {
			return "((T)" + s + "f)"
		}
		return "((T)" + s + ")"
	}
	call := func(name string, a ...string) string {
		s := name + "("
		for i, x := range a {
			if i > 0 {
				s += ", "
			}
			s += x
		}
		return s + ")"
	}
	want := func(n int) error {
		if len(args) != n {
			return fmt.Errorf("%s takes %d operands, not %d", op.Name(), n, len(args))
		}
		return nil
	}
	switch o := op.(type) {
	case unary:
		if err := want(1); err != nil {
			return "", err
		}
		x := args[0]
		switch o.kind {
		case negKind:
			return "(-" + x + ")", nil
		case expKind, logKind, log1pKind, sqrtKind, sinKind, cosKind, tanhKind, erfKind:
			return call(f(unaryDefs[o.kind].cName()), x), nil
		case squareKind:
			return "(" + x + " * " + x + ")", nil
		case absKind:
			return call(f("fabs"), x), nil
		case signKind:
			return call("nb_sign", x), nil
		case sigmoidKind:
			return call("nb_sigmoid", x), nil
		case reluKind:
			return call("nb_relu", x), nil
		case softplusKind:
			return call("nb_softplus", x), nil
		case powConstKind:
			return call(f("pow"), x, lit(o.c)), nil
		case scaleKind:
			return "(" + x + " * " + lit(o.c) + ")", nil
		case geluKind:
			return call("nb_gelu", x), nil
		case geluTanhKind:
			return call("nb_gelu_tanh", x), nil
		case siluKind:
			return "(" + x + " * " + call("nb_sigmoid", x) + ")", nil
		}
	case binary:
		if err := want(2); err != nil {
			return "", err
		}
		a, b := args[0], args[1]
		switch o.kind {
		case addKind:
			return "(" + a + " + " + b + ")", nil
		case subKind:
			return "(" + a + " - " + b + ")", nil
		case mulKind:
			return "(" + a + " * " + b + ")", nil
		case divKind:
			return "(" + a + " / " + b + ")", nil
		case powKind:
			return call(f("pow"), a, b), nil
		case maximumKind:
			return call("nb_max", a, b), nil
		case minimumKind:
			return call("nb_min", a, b), nil
		case greaterKind:
			return "(T)(" + a + " > " + b + ")", nil
		case lessKind:
			return "(T)(" + a + " < " + b + ")", nil
		case equalKind:
			return "(T)(" + a + " == " + b + ")", nil
		}
	case whereOp:
		if err := want(3); err != nil {
			return "", err
		}
		return "(" + args[0] + " != (T)0 ? " + args[1] + " : " + args[2] + ")", nil
	}
	return "", fmt.Errorf("%s has no C expression", opLabel(op))
}

// cName is the libm function (float64 name) of a unary op that has one.
func (d unaryDef) cName() string {
	switch d.name {
	case "Exp":
		return "exp"
	case "Log":
		return "log"
	case "Log1p":
		return "log1p"
	case "Sqrt":
		return "sqrt"
	case "Sin":
		return "sin"
	case "Cos":
		return "cos"
	case "Tanh":
		return "tanh"
	case "Erf":
		return "erf"
	}
	return ""
}

// ElementwiseCPrelude is the C the expressions of ElementwiseC need, for
// a type T (typedef'd to float or double before it) and the libm names of
// the dtype (f32: expf and so on). DEVICE marks the helpers for the
// device (CUDA's __device__, or nothing for a host compiler).
func ElementwiseCPrelude(f32 bool) string {
	f := func(name string) string {
		if f32 {
			return name + "f"
		}
		return name
	}
	return `static DEVICE inline T nb_max(T a, T b) {
	if (a != a) return a;
	if (b != b) return b;
	if (a == b) return signbit(a) ? b : a;
	return a > b ? a : b;
}
static DEVICE inline T nb_min(T a, T b) {
	if (a != a) return a;
	if (b != b) return b;
	if (a == b) return signbit(a) ? a : b;
	return a < b ? a : b;
}
static DEVICE inline T nb_sign(T x) { return x > (T)0 ? (T)1 : (x < (T)0 ? (T)-1 : x); }
static DEVICE inline T nb_relu(T x) { return x != x ? x : (x > (T)0 ? x : (T)0); }
static DEVICE inline T nb_sigmoid(T x) {
	if (x >= (T)0) return (T)1 / ((T)1 + ` + f("exp") + `(-x));
	T e = ` + f("exp") + `(x);
	return e / ((T)1 + e);
}
static DEVICE inline T nb_softplus(T x) { return nb_relu(x) + ` + f("log1p") + `(` + f("exp") + `(-` + f("fabs") + `(x))); }
static DEVICE inline T nb_gelu(T x) { return (T)0.5 * x * ((T)1 + ` + f("erf") + `(x * (T)0.7071067811865476)); }
static DEVICE inline T nb_gelu_tanh(T x) {
	return (T)0.5 * x * ((T)1 + ` + f("tanh") + `((T)0.7978845608028654 * (x + (T)0.044715 * x * x * x)));
}
`
}
