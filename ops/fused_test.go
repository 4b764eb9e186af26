package ops

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/kernel/parallel"
)

// elementwiseOps are the ops random expressions draw from: every unary
// and binary kind, and Where.
func elementwiseOps() []graph.Op {
	var all []graph.Op
	for k := range unaryDefs {
		all = append(all, unary{kind: unaryKind(k), c: 0.75})
	}
	all = append(all, unary{kind: powConstKind, c: 2}, unary{kind: scaleKind, c: -3})
	for k := range binaryNames {
		all = append(all, binary{binaryKind(k)})
	}
	return append(all, whereOp{})
}

// randomExpression builds, in a new graph, a random elementwise expression
// of nSteps ops over full-size inputs of the given shape, scalar inputs
// and, for shapes of rank 2, a row and a column broadcast, both as graph
// nodes and as the steps of a fused op. Operands are
// inputs or earlier steps, so results may be read more than once; every
// step reads at least one full-size operand.
func randomExpression(rng *rand.Rand, dtype tensor.Dtype, shape []int, nSteps int) (inputs []*graph.Node, types []graph.Type, steps []FusedStep, out *graph.Node) {
	g := graph.New()
	full := 1 + rng.IntN(3)
	shapes := make([][]int, full, full+4)
	for i := range shapes {
		shapes[i] = shape
	}
	for range rng.IntN(3) {
		shapes = append(shapes, nil)
	}
	if len(shape) == 2 {
		shapes = append(shapes, shape[1:], []int{shape[0], 1})
	}
	for _, s := range shapes {
		inputs = append(inputs, g.Input("in", dtype, s...))
		types = append(types, inputs[len(inputs)-1].Type())
	}
	operands := append([]*graph.Node(nil), inputs...)
	isFull := func(k int) bool { return operands[k].Type().Size() == graph.ShapeSize(shape) }
	all := elementwiseOps()
	for range nSteps {
		op := all[rng.IntN(len(all))]
		_, arity, _ := elementwiseKind(op)
		args := make([]int, arity)
		for k := range args {
			args[k] = rng.IntN(len(operands))
			if rng.IntN(2) == 0 && len(operands) > len(inputs) {
				args[k] = len(operands) - 1 // chains, mostly
			}
		}
		if k := rng.IntN(arity); !isFull(args[k]) {
			args[k] = rng.IntN(full) // a full-size input
		}
		nodes := make([]*graph.Node, arity)
		for k, a := range args {
			nodes[k] = operands[a]
		}
		n := graph.Apply(op, nodes...)
		steps = append(steps, FusedStep{Op: op, Args: args, Node: n})
		operands = append(operands, n)
	}
	return inputs, types, steps, operands[len(operands)-1]
}

// sameBits reports whether two tensors hold the same bits.
func sameBits(a, b *tensor.Dense) bool {
	n := graph.ShapeSize(a.Shape())
	if n != graph.ShapeSize(b.Shape()) {
		return false
	}
	for i := range n {
		if math.Float64bits(graph.Float(a, i)) != math.Float64bits(graph.Float(b, i)) {
			return false
		}
	}
	return true
}

// informative reports whether most of t's elements are finite and, past
// one element, they take more than two values.
func informative(t *tensor.Dense) bool {
	if t == nil {
		return false
	}
	n := graph.ShapeSize(t.Shape())
	finite, values := 0, map[float64]bool{}
	for i := range n {
		if v := graph.Float(t, i); !math.IsNaN(v) && !math.IsInf(v, 0) {
			finite++
			values[v] = true
		}
	}
	return 2*finite >= n && (n == 1 || len(values) > 2)
}

// A fused op computes the bits the unfused ops compute, one after another,
// for sizes within a block, across blocks and split over threads, with
// scalars broadcast.
func TestFusedMatchesUnfused(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pools := []*parallel.Pool{parallel.New(1), parallel.New(2), parallel.New(3)}
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	// Rows of 64 and 256 repeat whole in every block: gathered once per
	// part.
	shapes := [][]int{{}, {7}, {3, 100}, {2000}, {2*parallelMin + 300}, {5, parallelMin/2 + 77}, {21, 64}, {9, 256}, {parallelMin/32 + 3, 64}}
	for _, dtype := range dtypes {
		for _, shape := range shapes {
			trials := 6
			if graph.ShapeSize(shape) > parallelMin {
				trials = 2
			}
			for trial := range trials {
				var (
					op   *FusedOp
					in   []*tensor.Dense
					want *tensor.Dense
				)
				// Expressions whose values all went NaN, or to one
				// value, would hide wrong operands: draw again.
				for !informative(want) {
					inputs, types, steps, out := randomExpression(rng, dtype, shape, 5+rng.IntN(36))
					var err error
					op, err = NewFused(types, steps)
					if err != nil {
						t.Fatalf("case %v %v #%d: NewFused: %v", dtype, shape, trial, err)
					}
					feeds := map[*graph.Node]*tensor.Dense{}
					in = make([]*tensor.Dense, len(inputs))
					for i, x := range inputs {
						in[i] = randomDense(rng, dtype, x.Shape()...)
						feeds[x] = in[i]
					}
					want = eval(t, out, feeds)
				}
				for _, p := range pools {
					got := graph.NewDenseOf(graph.TypeOf(want.Dtype(), want.Shape()...))
					if err := op.ForwardExec(graph.NewExec(p), got, in); err != nil {
						t.Fatal(err)
					}
					if !sameBits(got, want) {
						t.Errorf("case %v %v #%d (%s), %d threads: got %v…, want %v…", dtype, shape, trial, op.Name(),
							p.Threads(), graph.Float(got, 0), graph.Float(want, 0))
					}
				}
			}
		}
	}
}

// The output may overwrite the input InPlace names.
func TestFusedInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, dtype := range dtypes {
		for range 10 {
			inputs, types, steps, out := randomExpression(rng, dtype, []int{600}, 12)
			op, err := NewFused(types, steps)
			if err != nil {
				t.Fatal(err)
			}
			k := op.InPlace()
			if k < 0 || types[k].Size() != 600 {
				t.Fatalf("InPlace: got %d, want a full-size input", k)
			}
			feeds := map[*graph.Node]*tensor.Dense{}
			in := make([]*tensor.Dense, len(inputs))
			for i, x := range inputs {
				in[i] = randomDense(rng, dtype, x.Shape()...)
				feeds[x] = in[i]
			}
			want := eval(t, out, feeds)
			if err := op.Forward(in[k], in); err != nil {
				t.Fatal(err)
			}
			if !sameBits(in[k], want) {
				t.Errorf("case %v %s: in place, values differ from unfused", dtype, op.Name())
			}
		}
	}
}

// Runs with a machine's Exec allocate nothing once its state is made.
func TestFusedDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, threads := range []int{1, 2} {
		pool := parallel.New(threads)
		e := graph.NewExec(pool)
		for _, size := range []int{16, 2*parallelMin + 5} {
			inputs, types, steps, _ := randomExpression(rng, graph.Float32, []int{size}, 20)
			op, err := NewFused(types, steps)
			if err != nil {
				t.Fatal(err)
			}
			in := make([]*tensor.Dense, len(inputs))
			for i, x := range inputs {
				in[i] = randomDense(rng, graph.Float32, x.Shape()...)
			}
			out := graph.NewDense(graph.Float32, size)
			run := func() {
				if err := op.ForwardExec(e, out, in); err != nil {
					t.Fatal(err)
				}
			}
			run()
			if n := testing.AllocsPerRun(20, run); n != 0 {
				t.Errorf("case %d threads, size %d: got %v allocations per run, want 0", threads, size, n)
			}
		}
		pool.Close()
	}
}

func TestFusedNameCostAndRegisters(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 4)
	s := g.Input("s", graph.Float64)
	types := []graph.Type{x.Type(), s.Type()}
	// tanh(x)·s + x: three steps, one scratch register.
	op, err := NewFused(types, []FusedStep{
		{Op: unary{kind: tanhKind}, Args: []int{0}},
		{Op: binary{mulKind}, Args: []int{2, 1}},
		{Op: binary{addKind}, Args: []int{3, 0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := op.Name(), "Fused(Tanh,Mul,Add)"; got != want {
		t.Errorf("Name: got %q, want %q", got, want)
	}
	if op.regs != 1 {
		t.Errorf("registers: got %d, want 1", op.regs)
	}
	c := op.Cost(types, x.Type())
	if want := (graph.Cost{Flops: 12, BytesRead: 40, BytesWritten: 32}); c != want {
		t.Errorf("Cost: got %+v, want %+v", c, want)
	}
	if got, err := op.Type(types); err != nil || !got.Equal(x.Type()) {
		t.Errorf("Type: got %v, %v, want %v", got, err, x.Type())
	}
	if _, err := op.Type([]graph.Type{x.Type(), x.Type()}); err == nil {
		t.Errorf("Type of a full-size input where a scalar was fused: got no error")
	}
	long := make([]FusedStep, 10)
	for i := range long {
		long[i] = FusedStep{Op: unary{kind: negKind}, Args: []int{i}}
	}
	op, err = NewFused(types[:1], long)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := op.Name(), "Fused(Neg,Neg,Neg,Neg,Neg,Neg,Neg,Neg,+2)"; got != want {
		t.Errorf("Name: got %q, want %q", got, want)
	}
}

func TestNewFusedErrors(t *testing.T) {
	v4 := graph.TypeOf(graph.Float64, 4)
	v3 := graph.TypeOf(graph.Float64, 3)
	s := graph.TypeOf(graph.Float64)
	m := graph.TypeOf(graph.Float64, 2, 4)
	neg := unary{kind: negKind}
	cases := []struct {
		name  string
		in    []graph.Type
		steps []FusedStep
		want  string
	}{
		{"no steps", []graph.Type{v4}, nil, "no steps"},
		{"not elementwise", []graph.Type{v4}, []FusedStep{{Op: reshapeOp{}, Args: []int{0}}}, "not an elementwise op"},
		{"nil op", []graph.Type{v4}, []FusedStep{{Args: []int{0}}}, "nil is not an elementwise op"},
		{"arity", []graph.Type{v4}, []FusedStep{{Op: binary{addKind}, Args: []int{0}}}, "1 operands, want 2"},
		{"later step", []graph.Type{v4}, []FusedStep{{Op: neg, Args: []int{1}}}, "neither an input nor an earlier step"},
		{"shapes", []graph.Type{v4, v3}, []FusedStep{{Op: binary{addKind}, Args: []int{0, 1}}}, "step 0 (Add)"},
		{"scalar step", []graph.Type{v4, s}, []FusedStep{{Op: neg, Args: []int{1}}, {Op: binary{addKind}, Args: []int{0, 2}}}, "step 0 (Neg) has 1 elements"},
		{"input too large", []graph.Type{v4, m}, []FusedStep{{Op: neg, Args: []int{0}}}, "input 1 of shape (2,4) does not broadcast to the output's (4)"},
	}
	for _, c := range cases {
		_, err := NewFused(c.in, c.steps)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// FirstNonFinite names the step where a value first goes bad: log of a
// negative element, then whatever reads it.
func TestFusedFirstNonFinite(t *testing.T) {
	x := dense(t, graph.Float32, []int{3}, 1, -1, 2)
	op, err := NewFused([]graph.Type{graph.TypeOf(graph.Float32, 3)}, []FusedStep{
		{Op: unary{kind: expKind}, Args: []int{0}},
		{Op: unary{kind: logKind}, Args: []int{0}},
		{Op: binary{addKind}, Args: []int{1, 2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for elem, want := range []int{-1, 1, -1} {
		if got := op.FirstNonFinite([]*tensor.Dense{x}, elem); got != want {
			t.Errorf("case element %d: got step %d, want %d", elem, got, want)
		}
	}
}

// Fused ops are never differentiated: Backward says so.
func TestFusedBackwardIsAnError(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2)
	op, err := NewFused([]graph.Type{x.Type()}, []FusedStep{
		{Op: unary{kind: expKind}, Args: []int{0}}, {Op: unary{kind: sinKind}, Args: []int{1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	y := graph.Apply(op, x)
	ctx := graph.NewGradContext(y, []bool{true})
	op.Backward(ctx, y)
	if err := ctx.Err(); err == nil || !strings.Contains(err.Error(), "after differentiation") {
		t.Errorf("got %v, want an error saying fused ops come after differentiation", err)
	}
}

// With several outputs, each is the bits its unfused node computes, and
// later steps read the outputs' elements as they read registers.
func TestFusedMultiMatchesUnfused(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	pool := parallel.New(2)
	defer pool.Close()
	for _, dtype := range dtypes {
		for _, shape := range [][]int{{}, {3, 100}, {2*parallelMin + 300}} {
			for trial := range 4 {
				inputs, types, steps, _ := randomExpression(rng, dtype, shape, 5+rng.IntN(36))
				outputs := []int{len(steps) - 1}
				for j := range len(steps) - 1 {
					if rng.IntN(4) == 0 {
						outputs = append(outputs, j)
					}
				}
				op, err := NewFused(types, steps, outputs...)
				if err != nil {
					t.Fatal(err)
				}
				feeds := map[*graph.Node]*tensor.Dense{}
				in := make([]*tensor.Dense, len(inputs))
				for i, x := range inputs {
					in[i] = randomDense(rng, dtype, x.Shape()...)
					feeds[x] = in[i]
				}
				outTypes, err := op.Multi().Types(types)
				if err != nil {
					t.Fatal(err)
				}
				got := make([]*tensor.Dense, len(outputs))
				for k := range got {
					got[k] = graph.NewDenseOf(outTypes[k])
				}
				if err := op.Multi().ForwardExec(graph.NewExec(pool), got, in); err != nil {
					t.Fatal(err)
				}
				for k, j := range outputs {
					if want := eval(t, steps[j].Node, feeds); !sameBits(got[k], want) {
						t.Errorf("case %v %v #%d: output %d (step %d) differs from unfused", dtype, shape, trial, k, j)
					}
				}
			}
		}
	}
	op, err := NewFused([]graph.Type{graph.TypeOf(graph.Float64, 2)}, []FusedStep{
		{Op: unary{kind: expKind}, Args: []int{0}}, {Op: unary{kind: sinKind}, Args: []int{1}},
	}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Type([]graph.Type{graph.TypeOf(graph.Float64, 2)}); err == nil || !strings.Contains(err.Error(), "2 outputs") {
		t.Errorf("Type of a fused op of two outputs: got %v, want an error", err)
	}
	if _, err := NewFused([]graph.Type{graph.TypeOf(graph.Float64, 2)}, op.Steps(), 1, 1); err == nil {
		t.Errorf("an output listed twice: got no error")
	}
}

// A run splits by its work, steps times elements, in parts of whole
// blocks.
func TestFusedParts(t *testing.T) {
	pool := parallel.New(2)
	defer pool.Close()
	chain := func(size, steps int) *FusedOp {
		s := make([]FusedStep, steps)
		for j := range s {
			s[j] = FusedStep{Op: unary{kind: negKind}, Args: []int{j}}
		}
		op, err := NewFused([]graph.Type{graph.TypeOf(graph.Float64, size)}, s)
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	cases := []struct {
		size, steps int
		exec        *graph.Exec
		n, chunk    int
	}{
		{2000, 40, graph.NewExec(pool), 8, 256},
		{2000, 40, graph.NewExec(nil), 1, 2000},
		{2000, 10, graph.NewExec(pool), 1, 2000}, // too little work
		{200, 400, graph.NewExec(pool), 1, 200},  // one block
		{parallelMin, 1, graph.NewExec(pool), parallelMin / parallelChunk, parallelChunk},
		{parallelMin, 4, graph.NewExec(pool), parallelMin / 2048, 2048},
	}
	for _, c := range cases {
		if n, chunk := chain(c.size, c.steps).parts(c.exec); n != c.n || chunk != c.chunk {
			t.Errorf("case %d elements, %d steps, %d threads: got %d parts of %d, want %d of %d",
				c.size, c.steps, c.exec.Threads(), n, chunk, c.n, c.chunk)
		}
	}
}
