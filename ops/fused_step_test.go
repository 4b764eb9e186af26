package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/parallel"
)

// The assembly kernel reads fusedCode at fixed offsets and knows the
// opcodes' values.
func TestFusedCodeLayout(t *testing.T) {
	var c fusedCode
	got := []uintptr{unsafe.Sizeof(c), unsafe.Offsetof(c.op), unsafe.Offsetof(c.dst), unsafe.Offsetof(c.src),
		unsafe.Offsetof(c.scale32), unsafe.Offsetof(c.scale)}
	want := []uintptr{fusedCodeSize, 0, 4, 8, 20, 24}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("fusedCode size and offsets: got %v, want %v", got, want)
			break
		}
	}
	ops := []fusedOpcode{fcAddVS, fcAddSV, fcDivSV, fcNeg, fcSquare, fcAbs, fcSign, fcScale, fcReLU, fcGreater, fcLess, fcEqual}
	values := []fusedOpcode{4, 8, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	for i := range ops {
		if ops[i] != values[i] {
			t.Errorf("opcode %d is %d, want %d (as in internal/kernel/fusedasm)", i, ops[i], values[i])
		}
	}
}

// specialValues are inputs where kernels that differ by an instruction
// give different bits: signed zeros, infinities, NaN, subnormals.
var specialValues = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, math.Inf(1), math.Inf(-1), math.NaN(),
	5e-324, -2.5e-310, 1e-40, 1e308, -3e38, 3, -7.25, math.Pi}

// fillSpecial sets x's elements to the special values, then random ones.
func fillSpecial(rng *rand.Rand, x *tensor.Dense, shift int) {
	for i := range graph.ShapeSize(x.Shape()) {
		v := rng.Float64()*8 - 4
		if k := i + shift; k < 2*len(specialValues) {
			v = specialValues[k%len(specialValues)]
		}
		graph.SetFloat(x, i, v)
	}
}

// Each opcode, on vectors and scalar inputs, computes the bits of the
// unfused op for block lengths on both sides of the vector width, of
// shortRun and of a block, in the assembly kernel and in the Go one.
func TestFusedStepOpcodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	type form struct {
		op      graph.Op
		args    []int // inputs: 0 and 1 full-size, 2 a scalar
		want    fusedOpcode
		unaryOp bool
	}
	var forms []form
	for k := addKind; k <= divKind; k++ {
		forms = append(forms,
			form{binary{k}, []int{0, 1}, fcAddVV + fusedOpcode(k), false},
			form{binary{k}, []int{0, 2}, fcAddVS + fusedOpcode(k), false},
			form{binary{k}, []int{2, 1}, fcAddSV + fusedOpcode(k), false})
	}
	for k := greaterKind; k <= equalKind; k++ {
		for _, args := range [][]int{{0, 1}, {0, 2}, {2, 1}} {
			forms = append(forms, form{binary{k}, args, fcGreater + fusedOpcode(k-greaterKind), false})
		}
	}
	for _, u := range []struct {
		op   unary
		want fusedOpcode
	}{{unary{kind: negKind}, fcNeg}, {unary{kind: squareKind}, fcSquare}, {unary{kind: absKind}, fcAbs},
		{unary{kind: signKind}, fcSign}, {unary{kind: scaleKind, c: -1.3}, fcScale}, {unary{kind: reluKind}, fcReLU},
		{unary{kind: expKind}, fcUnary}} {
		forms = append(forms, form{u.op, []int{0}, u.want, true})
	}
	forms = append(forms, form{binary{maximumKind}, []int{0, 2}, fcBinary, false})
	paths := []bool{false}
	if useFusedAsm {
		paths = append(paths, true)
	}
	defer func(b bool) { useFusedAsm = b }(useFusedAsm)
	for _, dtype := range dtypes {
		for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, shortRun, shortRun + 1, fusedBlock, fusedBlock + 3, 600} {
			for _, f := range forms {
				g := graph.New()
				in := []*graph.Node{g.Input("a", dtype, n), g.Input("b", dtype, n), g.Input("c", dtype)}
				args := make([]*graph.Node, len(f.args))
				for k, a := range f.args {
					args[k] = in[a]
				}
				want := Neg(graph.Apply(f.op, args...)) // Neg: the first step's result sits in a register
				types := []graph.Type{in[0].Type(), in[1].Type(), in[2].Type()}
				op, err := NewFused(types, []FusedStep{{Op: f.op, Args: f.args}, {Op: unary{kind: negKind}, Args: []int{3}}})
				if err != nil {
					t.Fatal(err)
				}
				wantOp := f.want
				if n == 1 && !f.unaryOp {
					wantOp = fcBinary // every input is a scalar
				}
				if op.fast[0].op != wantOp {
					t.Errorf("%s%v, %d elements: opcode %d, want %d", f.op.Name(), f.args, n, op.fast[0].op, wantOp)
				}
				vals := []*tensor.Dense{graph.NewDense(dtype, n), graph.NewDense(dtype, n), graph.NewDense(dtype)}
				// Every special value in the vectors' elements and in the
				// rest, in short blocks.
				shifts := []int{0}
				if n <= 17 {
					shifts = shifts[:0]
					for k := range specialValues {
						shifts = append(shifts, k)
					}
				}
				for _, shift := range shifts {
					fillSpecial(rng, vals[0], shift)
					fillSpecial(rng, vals[1], shift+5)
					for i := 0; i < n; i += 3 { // ties, for the comparisons
						graph.SetFloat(vals[1], i, graph.Float(vals[0], i))
					}
					for _, c := range []float64{2.5, math.Copysign(0, -1), math.NaN(), math.Inf(-1)} {
						graph.SetFloat(vals[2], 0, c)
						ref := eval(t, want, map[*graph.Node]*tensor.Dense{in[0]: vals[0], in[1]: vals[1], in[2]: vals[2]})
						for _, asm := range paths {
							useFusedAsm = asm
							got := graph.NewDense(dtype, n)
							if err := op.ForwardExec(graph.NewExec(nil), got, vals); err != nil {
								t.Fatal(err)
							}
							if i := firstDifferentBits(got, ref); i >= 0 {
								t.Errorf("%v, %d elements, %s%v, scalar %v, assembly %v: element %d is %v, want %v", dtype, n,
									f.op.Name(), f.args, c, asm, i, graph.Float(got, i), graph.Float(ref, i))
							}
						}
						if f.unaryOp {
							break // the scalar is not read
						}
					}
				}
			}
		}
	}
}

// firstDifferentBits is the first element where a and b (of one dtype and
// size) hold different bits, or -1.
func firstDifferentBits(a, b *tensor.Dense) int {
	for i := range graph.ShapeSize(a.Shape()) {
		if a.Dtype() == graph.Float32 {
			if math.Float32bits(a.Float32s()[i]) != math.Float32bits(b.Float32s()[i]) {
				return i
			}
		} else if math.Float64bits(a.Float64s()[i]) != math.Float64bits(b.Float64s()[i]) {
			return i
		}
	}
	return -1
}

// A long chain over a short vector, with every opcode the assembly runs
// and some it does not, computes the unfused bits (the kernels hand steps
// to each other).
func TestFusedStepChain(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, dtype := range dtypes {
		for _, n := range []int{16, 21} {
			g := graph.New()
			x, y, c := g.Input("x", dtype, n), g.Input("y", dtype, n), g.Input("c", dtype)
			types := []graph.Type{x.Type(), y.Type(), c.Type()}
			ops := []graph.Op{binary{mulKind}, binary{addKind}, unary{kind: absKind}, binary{divKind}, unary{kind: scaleKind, c: 0.7},
				unary{kind: tanhKind}, binary{subKind}, unary{kind: signKind}, unary{kind: reluKind}, unary{kind: squareKind}, unary{kind: negKind}}
			nodes := []*graph.Node{x, y, c}
			var steps []FusedStep
			for j := range 60 {
				op := ops[j%len(ops)]
				last := len(nodes) - 1
				args := []int{last}
				if _, ok := op.(binary); ok {
					args = append(args, rng.IntN(3))
				}
				operands := make([]*graph.Node, len(args))
				for k, a := range args {
					operands[k] = nodes[a]
				}
				nodes = append(nodes, graph.Apply(op, operands...))
				steps = append(steps, FusedStep{Op: op, Args: args})
			}
			op, err := NewFused(types, steps)
			if err != nil {
				t.Fatal(err)
			}
			vals := []*tensor.Dense{randomDense(rng, dtype, n), randomDense(rng, dtype, n), graph.NewDense(dtype)}
			graph.SetFloat(vals[2], 0, 1.25)
			want := eval(t, nodes[len(nodes)-1], map[*graph.Node]*tensor.Dense{x: vals[0], y: vals[1], c: vals[2]})
			got := graph.NewDense(dtype, n)
			if err := op.ForwardExec(graph.NewExec(nil), got, vals); err != nil {
				t.Fatal(err)
			}
			if i := firstDifferentBits(got, want); i >= 0 || !informative(want) {
				t.Errorf("%v, %d elements: element %d is %v, want %v (%s)", dtype, n, i, graph.Float(got, max(i, 0)),
					graph.Float(want, max(i, 0)), fmt.Sprint(graph.Float(want, 0)))
			}
		}
	}
}

// Fused ops of different sizes and registers, run in turn on one Exec,
// find their registers and operands: the pointers a run leaves behind are
// set again for the next op.
func TestFusedSharedExec(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, threads := range []int{1, 2} {
		pool := parallel.New(threads)
		e := graph.NewExec(pool)
		type fused struct {
			op     *FusedOp
			inputs []*graph.Node
			out    *graph.Node
		}
		var all []fused
		for _, size := range []int{16, 300, 2*parallelMin + 5, 5} {
			inputs, types, steps, out := randomExpression(rng, graph.Float64, []int{size}, 10+rng.IntN(20))
			op, err := NewFused(types, steps)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, fused{op, inputs, out})
		}
		for run := range 3 * len(all) {
			f := all[(run*3)%len(all)]
			in := make([]*tensor.Dense, len(f.inputs))
			feeds := map[*graph.Node]*tensor.Dense{}
			for i, x := range f.inputs {
				in[i] = randomDense(rng, graph.Float64, x.Shape()...)
				feeds[x] = in[i]
			}
			want := eval(t, f.out, feeds)
			got := graph.NewDenseOf(graph.TypeOf(graph.Float64, want.Shape()...))
			if err := f.op.ForwardExec(e, got, in); err != nil {
				t.Fatal(err)
			}
			if i := firstDifferentBits(got, want); i >= 0 {
				t.Errorf("%d threads, run %d (%s): element %d is %v, want %v", threads, run, f.op.Name(), i, graph.Float(got, i), graph.Float(want, i))
			}
		}
		pool.Close()
	}
}
