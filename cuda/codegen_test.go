package cuda

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// fusedCases are graphs whose compiled programs hold fusion groups: every
// unary op, every binary op with broadcasting and Where, and a chain with
// its gradient.
var fusedCases = []struct {
	name  string
	build func(g *graph.Graph, dtype tensor.Dtype) []*graph.Node
}{
	{"unary", func(g *graph.Graph, dtype tensor.Dtype) []*graph.Node {
		x := g.Input("x", dtype, 3, 5)
		c := ops.Sub(x, g.Scalar(1, dtype)) // on both sides of 0
		terms := []*graph.Node{ops.Neg(x), ops.Exp(c), ops.Log(x), ops.Log1p(x), ops.Sqrt(x), ops.Square(c), ops.Abs(c),
			ops.Sign(c), ops.Sin(c), ops.Cos(c), ops.Tanh(c), ops.Sigmoid(ops.Scale(c, 30)), ops.ReLU(c),
			ops.Softplus(ops.Scale(c, 20)), ops.PowConst(x, 2.5), ops.Scale(x, -0.3), ops.Erf(c), ops.GELU(c, false),
			ops.GELU(c, true), ops.SiLU(c)}
		s := terms[0]
		for _, t := range terms[1:] {
			s = ops.Add(s, ops.Mul(t, ops.Scale(x, 0.5)))
		}
		return []*graph.Node{s}
	}},
	{"binary with broadcasting", func(g *graph.Graph, dtype tensor.Dtype) []*graph.Node {
		a := g.Input("a", dtype, 3, 1, 4)
		b := g.Input("b", dtype, 4)
		c := g.Input("c", dtype, 3, 2, 1)
		d := ops.Sub(ops.Mul(a, c), b)
		s := ops.Add(ops.Div(d, ops.Add(b, c)), ops.Pow(ops.Add(b, c), a))
		m := ops.Add(ops.Maximum(d, b), ops.Minimum(ops.Neg(d), c))
		w := ops.Where(ops.Greater(d, c), s, ops.Add(ops.Less(a, b), ops.Equal(c, c)))
		return []*graph.Node{ops.Add(ops.Mul(s, m), w), m}
	}},
	{"chain and gradient", func(g *graph.Graph, dtype tensor.Dtype) []*graph.Node {
		x := g.Input("x", dtype, 16)
		y := x
		for range 10 {
			y = ops.Scale(ops.Div(ops.Add(ops.Mul(y, x), x), ops.Add(ops.Abs(y), g.Scalar(1, dtype))), 2)
		}
		gr, err := compile.Grad(ops.Sum(ops.Tanh(y)), x)
		if err != nil {
			panic(err)
		}
		return []*graph.Node{y, gr[0]}
	}},
}

// TestFusedSourceOnTheHost compiles every fusion group's kernel with the
// host's C compiler (NABLA_HOST) and checks its outputs against the CPU
// kernel's on random inputs: float64 to 1e-12 relative, float32 to 1e-5.
func TestFusedSourceOnTheHost(t *testing.T) {
	cc, err := exec.LookPath("gcc")
	if err != nil {
		if cc, err = exec.LookPath("cc"); err != nil {
			t.Skip("no C compiler (gcc or cc) to compile the kernels on the host")
		}
	}
	groups := forEachFusedGroup(t, func(name string, fused *ops.FusedOp, in []graph.Type, dtype tensor.Dtype) {
		checkOnHost(t, cc, name, fused, in, dtype)
	})
	if groups < 6 {
		t.Fatalf("only %d fusion groups: the cases do not exercise the generator", groups)
	}
}

// forEachFusedGroup calls check with every fusion group of fusedCases'
// programs in both float dtypes, named, and returns how many there were.
func forEachFusedGroup(t *testing.T, check func(name string, fused *ops.FusedOp, in []graph.Type, dtype tensor.Dtype)) int {
	t.Helper()
	groups := 0
	for _, c := range fusedCases {
		for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
			g := graph.New()
			p, err := compile.Compile(c.build(g, dtype))
			if err != nil {
				t.Fatal(err)
			}
			for k, in := range p.Instructions() {
				if fused := in.Fused(); fused != nil {
					groups++
					check(fmt.Sprintf("%s/%v/%d", c.name, dtype, k), fused, in.InTypes, dtype)
				}
			}
		}
	}
	return groups
}

func checkOnHost(t *testing.T, cc, name string, op *ops.FusedOp, in []graph.Type, dtype tensor.Dtype) {
	t.Helper()
	src, err := FusedSource("kernel", op, in)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	inputs, want := fusedCase(t, name, op, in, dtype)
	dir := t.TempDir()
	var main strings.Builder
	main.WriteString("#define NABLA_HOST\n#include \"kernel.c\"\n#include <stdio.h>\n#include <stdlib.h>\nint main(void) {\n")
	var args []string
	for i, ty := range in {
		fmt.Fprintf(&main, "\tT *in%d = malloc(%d * sizeof(T)); if (fread(in%d, sizeof(T), %d, stdin) != %d) return 1;\n", i, max(ty.Size(), 1), i, ty.Size(), ty.Size())
		args = append(args, fmt.Sprintf("in%d", i))
	}
	n := want[0].Shape().TotalSize()
	for k := range want {
		fmt.Fprintf(&main, "\tT *out%d = malloc(%d * sizeof(T));\n", k, max(n, 1))
		args = append(args, fmt.Sprintf("out%d", k))
	}
	fmt.Fprintf(&main, "\tlong long fault = 0;\n\tkernel(%s, &fault, 1, %d);\n\tif (fault) return 2;\n", strings.Join(args, ", "), n)
	for k := range want {
		fmt.Fprintf(&main, "\tfwrite(out%d, sizeof(T), %d, stdout);\n", k, n)
	}
	main.WriteString("\treturn 0;\n}\n")
	for file, text := range map[string]string{"kernel.c": src, "main.c": main.String()} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "kernel")
	if out, err := exec.Command(cc, "-std=gnu11", "-O1", "-o", bin, filepath.Join(dir, "main.c"), "-lm").CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s\n%s", name, err, out, src)
	}
	var stdin bytes.Buffer
	for _, x := range inputs {
		if err := binary.Write(&stdin, binary.LittleEndian, graph.Backing(x)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &stdin
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: running the host kernel: %v", name, err)
	}
	checkFusedOutputs(t, name, src, got, want, dtype == graph.Float32)
}

// fusedCase draws a fusion group's inputs from [0.5, 1.5) and computes
// its outputs with the CPU kernel.
func fusedCase(t *testing.T, name string, op *ops.FusedOp, in []graph.Type, dtype tensor.Dtype) (inputs, want []*tensor.Dense) {
	t.Helper()
	outs, err := op.Types(in)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	rng := rand.New(rand.NewPCG(uint64(len(name)), 3))
	inputs = make([]*tensor.Dense, len(in))
	for i, ty := range in {
		v := make([]float64, ty.Size())
		for e := range v {
			v[e] = 0.5 + rng.Float64()
		}
		inputs[i], _ = graph.FromFloat64s(dtype, v, ty.Shape...)
	}
	want = make([]*tensor.Dense, len(outs))
	for k, ty := range outs {
		want[k] = graph.NewDenseOf(ty)
	}
	if len(outs) == 1 {
		err = op.Forward(want[0], inputs)
	} else {
		err = op.Multi().Forward(want, inputs)
	}
	if err != nil {
		t.Fatalf("%s: CPU kernel: %v", name, err)
	}
	return inputs, want
}

// checkFusedOutputs compares a kernel's outputs, one after another in
// got's bytes, with the CPU's: float64 to 1e-12, float32 to 1e-5 relative.
func checkFusedOutputs(t *testing.T, name, src string, got []byte, want []*tensor.Dense, f32 bool) {
	t.Helper()
	values := decode(got, f32)
	tol := tolerance(want[0].Dtype())
	for k, w := range want {
		n := w.Shape().TotalSize()
		for e := range n {
			g, wv := values[k*n+e], graph.Float(w, e)
			if !(math.Abs(g-wv) <= tol*max(1, math.Abs(wv))) && !(math.IsNaN(g) && math.IsNaN(wv)) {
				t.Fatalf("%s: output %d element %d: kernel %v, CPU %v\n%s", name, k, e, g, wv, src)
			}
		}
	}
}

// An op with no C expression is an error naming it.
func TestFusedSourceRefuses(t *testing.T) {
	if _, err := ops.ElementwiseC(ops.MatMulOp{}, []string{"a", "b"}, false); err == nil || !strings.Contains(err.Error(), "MatMul") {
		t.Fatalf("got %v, want an error naming MatMul", err)
	}
}
