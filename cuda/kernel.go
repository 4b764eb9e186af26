package cuda

import (
	"fmt"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// kernelPrelude is the C every module starts with: the macros that make a
// kernel a CUDA kernel, or with NABLA_HOST a plain C function looping over
// its work items (from the last with NABLA_REVERSE, so that tests catch
// kernels whose items depend on one another's order); the element types; T, the module's floating-point type;
// and the helpers of ops.ElementwiseC.
func kernelPrelude(f32 bool) string {
	ctype := "double"
	if f32 {
		ctype = "float"
	}
	return `#ifdef NABLA_HOST
#include <math.h>
#define DEVICE
#define KERNEL
#define FIRST 0
#define STRIDE 1
#ifdef NABLA_REVERSE
#define ITEM(k, n) ((n) - 1 - (k))
#else
#define ITEM(k, n) (k)
#endif
#define ATOMIC_ADD(p, v) (*(p) += (v))
#else
#define DEVICE __device__
#define KERNEL extern "C" __global__
#define FIRST ((long long)blockIdx.x * blockDim.x + threadIdx.x)
#define STRIDE ((long long)gridDim.x * blockDim.x)
#define ITEM(k, n) (k)
#define ATOMIC_ADD(p, v) atomicAdd((p), (v))
#endif
typedef long long i64;
typedef int i32;
#define FAULT() (*fault_ = site_)
typedef ` + ctype + ` T;
` + ops.ElementwiseCPrelude(f32)
}

// kparam is a kernel parameter: its C type and name.
type kparam struct {
	ctype, name string
}

// kernelDef is one kernel of a module: a graph.CUDASource with its name
// and parameters.
type kernelDef struct {
	name    string
	params  []kparam // pointers (scratch last), the fault word and site, then the item count n
	body    string
	helpers string
}

// newKernelDef names a kernel whose parameters are the given inputs
// (const) and outputs, its scratch if it has one, then the fault word,
// the site and n. restrict marks the pointers as not
// aliasing (no output shares an input's memory).
func newKernelDef(name string, src graph.CUDASource, in, out []graph.Type, restrict bool) kernelDef {
	q := ""
	if restrict {
		q = "__restrict__ "
	}
	k := kernelDef{name: name, body: src.Body, helpers: src.Helpers}
	for i, t := range in {
		k.params = append(k.params, kparam{"const " + ops.CType(t.DType) + " *" + q, fmt.Sprintf("in%d", i)})
	}
	for i, t := range out {
		k.params = append(k.params, kparam{ops.CType(t.DType) + " *" + q, fmt.Sprintf("out%d", i)})
	}
	if src.Scratch > 0 {
		k.params = append(k.params, kparam{"double *" + q, "scratch"})
	}
	// FAULT() writes the launch's site (its instruction, plus 1) into the
	// fault word, which the executable reads after the work.
	k.params = append(k.params, kparam{"long long *", "fault_"}, kparam{"long long ", "site_"}, kparam{"long long ", "n"})
	return k
}

// source is the kernel's C: a grid-stride loop over its items, and under
// NABLA_HOST a function name_host taking the arguments as an array of
// 64-bit words, which the host backend calls.
func (k kernelDef) source() string {
	var b strings.Builder
	decl := make([]string, len(k.params))
	casts := make([]string, len(k.params))
	for i, p := range k.params {
		decl[i] = p.ctype + p.name
		casts[i] = fmt.Sprintf("(%s)a[%d]", strings.ReplaceAll(p.ctype, "__restrict__ ", ""), i)
	}
	fmt.Fprintf(&b, "KERNEL void %s(%s) {\n", k.name, strings.Join(decl, ", "))
	b.WriteString("\tfor (long long k_ = FIRST; k_ < n; k_ += STRIDE) {\n\t\tconst long long i = ITEM(k_, n);\n")
	for _, line := range strings.Split(strings.TrimRight(k.body, "\n"), "\n") {
		b.WriteString("\t\t" + line + "\n")
	}
	b.WriteString("\t}\n}\n")
	fmt.Fprintf(&b, "#ifdef NABLA_HOST\nvoid %s_host(const unsigned long long *a) { %s(%s); }\n#endif\n",
		k.name, k.name, strings.Join(casts, ", "))
	return b.String()
}

// moduleSource is the C of a module holding kernels, T being float32 or
// float64: the prelude, each distinct helper once, then the kernels.
func moduleSource(f32 bool, kernels []kernelDef) string {
	var b strings.Builder
	b.WriteString(kernelPrelude(f32))
	seen := map[string]bool{}
	for _, k := range kernels {
		if k.helpers != "" && !seen[k.helpers] {
			seen[k.helpers] = true
			b.WriteString(k.helpers + "\n")
		}
	}
	for _, k := range kernels {
		b.WriteString(k.source())
	}
	return b.String()
}

// floatType is the dtype T stands for in an instruction's kernels: the
// outputs' first float dtype, else the inputs', else float64.
func floatType(in, out []graph.Type) tensor.Dtype {
	for _, ts := range [][]graph.Type{out, in} {
		for _, t := range ts {
			if graph.IsFloat(t.DType) {
				return t.DType
			}
		}
	}
	return graph.Float64
}
