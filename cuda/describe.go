package cuda

import (
	"fmt"
	"strings"

	"github.com/nabla-go/nabla/compile"
)

// describe lists a plan's steps, instruction by instruction: what runs
// where, on which buffers. Golden tests compare it, and it is what to
// read when a program runs slower on a GPU than expected.
func (pl *plan) describe(p *compile.Program) string {
	var b strings.Builder
	instrs := p.Instructions()
	for i, r := range pl.instrs {
		fmt.Fprintf(&b, "%d %s:", i, instrs[i].Name())
		if pl.onHost[i] {
			b.WriteString(" host\n")
			continue
		}
		if r[0] == r[1] {
			b.WriteString(" nothing\n")
			continue
		}
		b.WriteString("\n")
		for _, s := range pl.steps[r[0]:r[1]] {
			b.WriteString("\t" + pl.describeStep(s) + "\n")
		}
	}
	if pl.scratch != 0 {
		fmt.Fprintf(&b, "scratch: b%d, %d bytes\n", pl.scratch, bytesOf(pl.buffers[pl.scratch]))
	}
	if pl.updates[0] < pl.updates[1] {
		b.WriteString("updates:\n")
		for _, s := range pl.steps[pl.updates[0]:pl.updates[1]] {
			b.WriteString("\t" + pl.describeStep(s) + "\n")
		}
	}
	return b.String()
}

func (pl *plan) describeStep(s step) string {
	refs := make([]string, len(s.args))
	for i, r := range s.args {
		refs[i] = fmt.Sprintf("b%d", r.buf)
		if r.off != 0 {
			refs[i] += fmt.Sprintf("+%d", r.off)
		}
	}
	switch s.kind {
	case stepKernel:
		work := ""
		if s.work > 0 {
			work = fmt.Sprintf(", work %d", s.work)
		}
		return fmt.Sprintf("kernel %s(%s) × %d%s", pl.kernels[s.kernel].name, strings.Join(refs, ", "), s.n, work)
	case stepCopy:
		return fmt.Sprintf("copy %d bytes %s ← %s", s.n, refs[0], refs[1])
	case stepLibrary:
		return pl.describeLibrary(s, refs)
	case stepGemm:
		g := s.gemm
		prec := "d"
		if g.f32 {
			prec = "s"
		}
		return fmt.Sprintf("%sgemm%s(%s%s m=%d n=%d k=%d A=%s lda=%d B=%s ldb=%d C=%s ldc=%d beta=%g)",
			prec, batchSuffix(g), transFlag(g.transA), transFlag(g.transB), g.m, g.n, g.k, refs[0], g.lda, refs[1], g.ldb, refs[2], g.ldc, g.beta)
	}
	return "host"
}

func transFlag(trans bool) string {
	if trans {
		return "T"
	}
	return "N"
}

func batchSuffix(g gemmCall) string {
	if g.batch <= 1 {
		return ""
	}
	return fmt.Sprintf("StridedBatched[%d; strides %d %d %d]", g.batch, g.strideA, g.strideB, g.strideC)
}
