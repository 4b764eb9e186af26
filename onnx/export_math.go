package onnx

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx/onnxpb"
)

// The exports below write an op as several ONNX ops that compute what
// nabla does, where the plain translation would lose digits or overflow.

// exportLog1p writes log(1+x) as Goldberg's log(u)·x/(u−1), u = 1+x,
// which keeps a small x's digits that log(u) alone loses (log1p(1e-20) =
// 1e-20, not 0): x where u rounds to 1 (±0 and tiny x), log(u) where u−1
// is x (infinities, x ≤ −1, huge x).
func exportLog1p(s *step) error {
	t, x := s.n.Type(), s.in[0]
	one := s.e.scalarConst(s.out+"/one", t, 1)
	u := s.tmp("Add", []string{x, one})
	d := s.tmp("Sub", []string{u, one})
	ratio := s.tmp("Where", []string{s.tmp("Equal", []string{d, x}), one, s.tmp("Div", []string{x, d})})
	scaled := s.tmp("Mul", []string{s.tmp("Log", []string{u}), ratio})
	return s.final("Where", []string{s.tmp("Equal", []string{d, s.e.scalarConst(s.out+"/zero", t, 0)}), x, scaled})
}

// exportPowConst writes x^c. PowConst raises float32 values, through
// float64, to its float64 exponent: one float32 cannot hold (1e-310, 0.1)
// is written as that, a Pow of the values cast to double, cast back.
func exportPowConst(s *step) error {
	t := s.n.Type()
	if t.DType != graph.Float32 || float64(float32(s.a.C)) == s.a.C {
		return s.final("Pow", []string{s.in[0], s.e.scalarConst(s.out+"/exponent", t, s.a.C)})
	}
	wide := s.tmp("Cast", s.in, attrInt("to", int(onnxpb.TensorProto_DOUBLE)))
	pow := s.tmp("Pow", []string{wide, s.e.scalarConst(s.out+"/exponent", graph.TypeOf(graph.Float64), s.a.C)})
	return s.final("Cast", []string{pow}, attrInt("to", int(elemType(t.DType))))
}

// exportCrossEntropy is LogSumExp(logits) less the label's logit, or
// -Σ target·LogSoftmax(logits) over the classes a target names (zero
// targets add nothing, even against a logit of -∞).
func exportCrossEntropy(s *step) error {
	if s.n.OpName() == "CrossEntropy" {
		lse := s.e.fresh(s.out + "/lse")
		(&step{e: s.e, n: s.n, in: s.in, out: lse}).reduce("ReduceLogSumExp", s.in[0], []int{1}, false)
		picked := s.tmp("GatherElements", []string{s.in[0], s.unsqueezed(s.int64Of(1), 1)}, attrInt("axis", 1))
		flat := s.tmp("Squeeze", []string{picked, s.e.ints(s.out+"/axes", []int{1})})
		return s.final("Sub", []string{lse, flat})
	}
	// nabla sums float32's terms in float64: so does the model, so that
	// terms past float32's range do not make a finite loss NaN.
	logits, targets, t := s.in[0], s.in[1], s.n.Type()
	wide := t.DType == graph.Float32
	if wide {
		double := attrInt("to", int(onnxpb.TensorProto_DOUBLE))
		logits, targets, t = s.tmp("Cast", []string{logits}, double), s.tmp("Cast", []string{targets}, double), graph.TypeOf(graph.Float64)
	}
	logp := s.tmp("LogSoftmax", []string{logits}, attrInt("axis", 1))
	zero := s.e.scalarConst(s.out+"/zero", t, 0)
	terms := s.tmp("Where", []string{s.tmp("Equal", []string{targets, zero}), zero, s.tmp("Mul", []string{targets, logp})})
	sum := s.e.fresh(s.out + "/sum")
	(&step{e: s.e, n: s.n, in: s.in, out: sum}).reduce("ReduceSum", terms, []int{1}, false)
	if wide {
		return s.final("Cast", []string{s.tmp("Neg", []string{sum})}, attrInt("to", int(elemType(graph.Float32))))
	}
	return s.final("Neg", []string{sum})
}
