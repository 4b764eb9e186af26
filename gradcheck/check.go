package gradcheck

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Check compares the first derivatives of fn at inputs with central finite
// differences in float64. fn builds an output (a scalar or a tensor) from
// one input node per tensor of inputs; every entry of the Jacobian of the
// output with respect to each checked input is compared, the analytic one
// coming from the ops' Backward (compile.Gradients run in the vm).
//
// On a mismatch the error names the input, the worst entries, and the
// first op of fn's graph whose own Backward fails a local check at the
// values it had. Check never panics: misuse, a fn that panics or builds a
// poisoned node, and failing kernels are errors too.
func Check(fn func(in []*graph.Node) *graph.Node, inputs []*tensor.Dense, opts Options) error {
	return asError(checkFunc(fn, inputs, opts, FirstDerivative), "Check", "")
}

// GradGradCheck compares the second derivatives of fn at inputs with
// finite differences. With v a random direction per checked input and w
// random output gradients (1 for a scalar output), it compares the
// gradient of the scalar ⟨∇⟨w, f⟩, v⟩, built by differentiating twice,
// with central finite differences of that scalar, whose forward runs the
// first-order gradient. Options.Seed fixes v and w.
func GradGradCheck(fn func(in []*graph.Node) *graph.Node, inputs []*tensor.Dense, opts Options) error {
	return asError(checkFunc(fn, inputs, opts, SecondDerivative), "GradGradCheck", "")
}

func checkFunc(fn func(in []*graph.Node) *graph.Node, inputs []*tensor.Dense, opts Options, order Problem) *Error {
	if fn == nil {
		return fail(Misuse, nil, "fn is nil")
	}
	build := func(in []*graph.Node) ([]*graph.Node, *Error) {
		y, e := callFn(fn, in)
		if e != nil {
			return nil, e
		}
		return []*graph.Node{y}, nil
	}
	return checkDerivatives(build, inputs, opts, order, false)
}

// callFn calls the user's fn, turning a panic or a bad result into an error.
func callFn(fn func(in []*graph.Node) *graph.Node, in []*graph.Node) (y *graph.Node, e *Error) {
	defer func() {
		if r := recover(); r != nil {
			y, e = nil, fail(Misuse, nil, "fn panicked: %v (it was given %d input nodes)", r, len(in))
		}
	}()
	y = fn(in)
	if y == nil {
		return nil, fail(Misuse, nil, "fn returned a nil node")
	}
	if err := y.Err(); err != nil {
		return nil, fail(BuildFailed, err, "fn returned a poisoned node")
	}
	return y, nil
}

// builder builds a function's outputs from its input nodes.
type builder func(in []*graph.Node) ([]*graph.Node, *Error)

// checkDerivatives checks the first (or, with order SecondDerivative, the
// second) derivatives of build at inputs. single says build applies one op
// to the inputs, which then needs no culprit search.
func checkDerivatives(build builder, inputs []*tensor.Dense, opts Options, order Problem, single bool) *Error {
	vals, err := prepareInputs(inputs, opts.ConvertFloat32)
	if err != nil {
		return fail(Misuse, nil, "%v", err)
	}
	checked, err := opts.resolve(vals)
	if err != nil {
		return fail(Misuse, nil, "%v", err)
	}
	if order == SecondDerivative {
		build = secondOrder(build, checked, opts.Seed)
		single = false
	}
	in, e := instantiate(build, vals, checked)
	if e != nil {
		return e
	}
	e = in.compare(opts, order)
	if e != nil && e.Problem == order && !single {
		e.Culprit = in.culprit(opts)
	}
	return e
}

// secondOrder turns build into the scalar ⟨∇⟨w, f⟩, v⟩ of its gradient with
// respect to the checked inputs, for seeded random w and v.
func secondOrder(build builder, checked []int, seed uint64) builder {
	return func(in []*graph.Node) ([]*graph.Node, *Error) {
		ys, e := build(in)
		if e != nil {
			return nil, e
		}
		g := in[0].Graph()
		r := newRand(seed, streamSecondOrder)
		seeds := make([]*graph.Node, len(ys))
		for k, y := range ys {
			if !y.Type().IsScalar() {
				seeds[k] = g.Const(randomDense(r, y.Shape()))
			}
		}
		wrt := pick(in, checked)
		if e := checkDifferentiable(ys, wrt); e != nil {
			return nil, e
		}
		grads, err := compile.Gradients(ys, seeds, wrt, compile.ZerosIfDisconnected())
		if err != nil {
			return nil, fail(BuildFailed, err, "building the gradient failed")
		}
		var s *graph.Node
		for i, gr := range grads {
			term := ops.Sum(ops.Mul(gr, g.Const(randomDense(r, wrt[i].Shape()))))
			if s == nil {
				s = term
			} else {
				s = ops.Add(s, term)
			}
		}
		if s == nil { // no inputs checked: nothing depends on anything
			s = g.Scalar(0, graph.Float64)
		}
		return []*graph.Node{s}, nil
	}
}

func pick(nodes []*graph.Node, idx []int) []*graph.Node {
	out := make([]*graph.Node, len(idx))
	for i, j := range idx {
		out[i] = nodes[j]
	}
	return out
}

// instance is a function built into a graph of its own, with its input
// values (perturbed in place for finite differences) and a compiled
// forward program that every evaluation reruns.
type instance struct {
	g       *graph.Graph
	xs      []*graph.Node
	ys      []*graph.Node
	vals    []*tensor.Dense // float64; fed to every run
	feeds   vm.Feeds
	checked []int
	fwd     *vm.Machine
}

func instantiate(build builder, vals []*tensor.Dense, checked []int) (*instance, *Error) {
	in := &instance{g: graph.New(), vals: vals, checked: checked, feeds: vm.Feeds{}}
	for i, v := range vals {
		x := in.g.Input(fmt.Sprintf("in%d", i), v.Dtype(), v.Shape()...)
		in.xs = append(in.xs, x)
		in.feeds[x] = v
	}
	ys, e := build(in.xs)
	if e != nil {
		return nil, e
	}
	if err := in.g.Err(); err != nil {
		return nil, fail(BuildFailed, err, "the graph has an error")
	}
	for k, y := range ys {
		if y.Graph() != in.g {
			return nil, fail(Misuse, nil, "output %d (%v) does not belong to the graph of the input nodes", k, y)
		}
		if y.DType() != graph.Float64 {
			return nil, fail(BuildFailed, nil, "output %d (%v) is not float64 for float64 inputs", k, y)
		}
	}
	in.ys = ys
	p, err := compile.Compile(ys, compile.WithFixedDraws())
	if err != nil {
		return nil, fail(BuildFailed, err, "compiling the function failed")
	}
	if in.fwd, err = vm.New(p); err != nil {
		return nil, fail(BuildFailed, err, "allocating the machine failed")
	}
	return in, nil
}

// eval runs the forward program at the current input values, copying each
// output into dst[k].
func (in *instance) eval(dst [][]float64) error {
	if err := in.fwd.Run(in.feeds); err != nil {
		return err
	}
	for k, y := range in.ys {
		v, err := in.fwd.Value(y)
		if err != nil {
			return err
		}
		copy(dst[k], v.Float64s())
	}
	return nil
}

func (in *instance) outputBuffers() [][]float64 {
	bufs := make([][]float64, len(in.ys))
	for k, y := range in.ys {
		bufs[k] = make([]float64, y.Type().Size())
	}
	return bufs
}

// checkDifferentiable reports the first op between wrt and ys that has no
// Backward, naming it and where it was built.
func checkDifferentiable(ys, wrt []*graph.Node) *Error {
	for _, n := range dependents(ys, wrt) {
		if n.Kind() != graph.KindOp {
			continue
		}
		multi, _ := n.MultiOp()
		_, single := n.Op().(graph.Differentiable)
		_, many := multi.(graph.MultiDifferentiable)
		_, kernel := n.Op().(graph.BackwardKernel) // once-differentiable: first derivatives only
		if !single && !many && !kernel {
			return fail(Misuse, nil, "op %s (%v, built at %s) has no Backward: it does not implement graph.Differentiable, so its derivative cannot be checked",
				n.OpName(), n, n.Site())
		}
	}
	return nil
}

// dependents returns, in creation order, the nodes on a path from some
// node of wrt to some node of ys (ys and wrt included).
func dependents(ys, wrt []*graph.Node) []*graph.Node {
	if len(ys) == 0 {
		return nil
	}
	g := ys[0].Graph()
	last := 0
	for _, y := range ys {
		last = max(last, y.ID())
	}
	nodes := g.Nodes()[:last+1]
	needs := g.Descendants(wrt, last)
	feeds := ancestors(ys)
	var out []*graph.Node
	for _, n := range nodes {
		if needs[n.ID()] && feeds[n.ID()] {
			out = append(out, n)
		}
	}
	return out
}

// ancestors marks, by node ID, ys and every node they depend on; a
// multi-output op's outputs count together, since one kernel writes them.
func ancestors(ys []*graph.Node) []bool {
	last := 0
	for _, y := range ys {
		last = max(last, y.ID())
	}
	g := ys[0].Graph()
	seen := make([]bool, last+1)
	for _, y := range ys {
		seen[y.ID()] = true
	}
	for i := last; i >= 0; i-- {
		if !seen[i] {
			continue
		}
		n := g.Node(i)
		for _, x := range n.Inputs() {
			seen[x.ID()] = true
		}
		for _, o := range n.Outputs() {
			if o.ID() <= last {
				seen[o.ID()] = true
			}
		}
	}
	return seen
}
