package ops

import (
	"fmt"
	"math"
	"strings"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/vek"
)

// adamM32HelpersC defines the roundings of AdamM32's kernel: each
// operation rounded to nearest by itself (CUDA's _rn intrinsics, which
// the compiler does not contract into multiply-adds), float32 and
// float64; on the host, where the kernels are compiled without FMA, the
// plain operators.
const adamM32HelpersC = `#ifdef NABLA_HOST
#define nb_adam_fmul(a, b) ((float)(a) * (float)(b))
#define nb_adam_fadd(a, b) ((float)(a) + (float)(b))
#define nb_adam_fdiv(a, b) ((float)(a) / (float)(b))
#define nb_adam_fsqrt(a) sqrtf(a)
#define nb_adam_dmul(a, b) ((double)(a) * (double)(b))
#define nb_adam_dadd(a, b) ((double)(a) + (double)(b))
#define nb_adam_dsub(a, b) ((double)(a) - (double)(b))
#else
#define nb_adam_fmul(a, b) __fmul_rn(a, b)
#define nb_adam_fadd(a, b) __fadd_rn(a, b)
#define nb_adam_fdiv(a, b) __fdiv_rn(a, b)
#define nb_adam_fsqrt(a) __fsqrt_rn(a)
#define nb_adam_dmul(a, b) __dmul_rn(a, b)
#define nb_adam_dadd(a, b) __dadd_rn(a, b)
#define nb_adam_dsub(a, b) __dsub_rn(a, b)
#endif`

// CUDA is AdamM32's GPU kernel (graph.CUDAKernel): one item per element,
// reading p, g, m and v before writing p1, m1 and v1 (which may be
// written over them), with vek.AdamM32's operations in its order, each
// rounded to nearest by itself: float32 Adam's step from the gradient
// rounded to float32, its scalars β1, 1-β1, β2 and 1-β2 rounded to
// float32 as constants and the step size, eps and correction read and
// rounded on the device; the decay's product and p1's difference in
// float64. Its elements are vek.AdamM32's bit for bit (NaNs' payloads
// aside). Betas that round to a float32 infinity or NaN have no kernel.
func (op adamM32Op) CUDA(in, out []graph.Type) ([]graph.CUDASource, error) {
	want, err := op.Types(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", op.Name(), err)
	}
	if len(out) != len(want) {
		return nil, fmt.Errorf("%s: %d output types for %d outputs", op.Name(), len(out), len(want))
	}
	for i, t := range want {
		if !t.Equal(out[i]) {
			return nil, fmt.Errorf("%s: output %d's type %v, want %v", op.Name(), i, out[i], t)
		}
	}
	consts := [4]float32{float32(op.beta1), float32(1 - op.beta1), float32(op.beta2), float32(1 - op.beta2)}
	for _, c := range consts {
		if math.IsInf(float64(c), 0) || math.IsNaN(float64(c)) {
			return nil, fmt.Errorf("%s: β1 %v or β2 %v beyond float32's finite values", op.Name(), op.beta1, op.beta2)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "const double p = in0[i], g = in1[i];\nconst float m = in2[i], v = in3[i];\n")
	fmt.Fprintf(&b, "const float step = (float)in4[0], eps = (float)in5[0];\n")
	next := 6
	if op.corrected {
		fmt.Fprintf(&b, "const float corr = (float)in%d[0];\n", next)
		next++
	}
	gamma, base := "(float)g", "p"
	switch op.mode {
	case vek.L2Decay:
		fmt.Fprintf(&b, "const double decay = in%d[0];\n", next)
		gamma = "(float)nb_adam_dadd(g, nb_adam_dmul(p, decay))"
	case vek.DecoupledDecay:
		fmt.Fprintf(&b, "const double decay = in%d[0];\n", next)
		base = "nb_adam_dmul(p, decay)"
	}
	fmt.Fprintf(&b, "const float gam = %s;\n", gamma)
	fmt.Fprintf(&b, "const float m1 = nb_adam_fadd(nb_adam_fmul(m, %s), nb_adam_fmul(gam, %s));\n", float32C(consts[0]), float32C(consts[1]))
	fmt.Fprintf(&b, "const float v1 = nb_adam_fadd(nb_adam_fmul(v, %s), nb_adam_fmul(nb_adam_fmul(gam, gam), %s));\n", float32C(consts[2]), float32C(consts[3]))
	b.WriteString("float s = nb_adam_fsqrt(v1);\n")
	if op.corrected {
		b.WriteString("s = nb_adam_fdiv(s, corr);\n")
	}
	b.WriteString("s = nb_adam_fadd(s, eps);\n")
	b.WriteString("const float d = nb_adam_fmul(step, nb_adam_fdiv(m1, s));\n")
	fmt.Fprintf(&b, "out0[i] = nb_adam_dsub(%s, (double)d);\nout1[i] = m1;\nout2[i] = v1;\n", base)
	return []graph.CUDASource{{N: int64(want[0].Size()), Body: b.String(), Helpers: adamM32HelpersC}}, nil
}
