package gradcheck

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// gradProgram compiles the gradients of the outputs with respect to the
// checked inputs, with the outputs' gradients (seeds) as inputs of the
// program, so one program serves every seed.
type gradProgram struct {
	m         *vm.Machine
	seeds     []*tensor.Dense // fed to the seed inputs
	grads     []*graph.Node   // one per checked input
	feeds     vm.Feeds
	seedNodes []*graph.Node
}

// gradients builds and compiles the gradient program of the instance.
func (in *instance) gradients() (*gradProgram, *Error) {
	gp := &gradProgram{feeds: vm.Feeds{}}
	for x, v := range in.feeds {
		gp.feeds[x] = v
	}
	for k, y := range in.ys {
		s := in.g.Input(fmt.Sprintf("seed%d", k), graph.Float64, y.Shape()...)
		gp.seedNodes = append(gp.seedNodes, s)
		gp.seeds = append(gp.seeds, graph.NewDense(graph.Float64, y.Shape()...))
		gp.feeds[s] = gp.seeds[k]
	}
	wrt := pick(in.xs, in.checked)
	if e := checkDifferentiable(in.ys, wrt); e != nil {
		return nil, e
	}
	grads, err := compile.Gradients(in.ys, gp.seedNodes, wrt, compile.ZerosIfDisconnected())
	if err != nil {
		return nil, fail(BuildFailed, err, "building the gradient failed")
	}
	gp.grads = grads
	if len(grads) == 0 {
		return gp, nil
	}
	p, err := compile.Compile(grads, compile.WithFixedDraws())
	if err != nil {
		return nil, fail(BuildFailed, err, "compiling the gradient failed")
	}
	if gp.m, err = vm.New(p); err != nil {
		return nil, fail(BuildFailed, err, "allocating the machine failed")
	}
	return gp, nil
}

// run computes the gradients for the current seeds, calling use with each
// checked input's gradient.
func (gp *gradProgram) run(use func(ci int, grad []float64)) error {
	if gp.m == nil {
		return nil
	}
	if err := gp.m.Run(gp.feeds); err != nil {
		return err
	}
	for ci, gn := range gp.grads {
		v, err := gp.m.Value(gn)
		if err != nil {
			return err
		}
		use(ci, v.Float64s())
	}
	return nil
}

// compare checks the derivatives, by projections first in fast mode.
func (in *instance) compare(opts Options, order Problem) *Error {
	if err := in.eval(in.outputBuffers()); err != nil {
		return fail(ForwardFailed, err, "the forward run at the given inputs failed")
	}
	gp, e := in.gradients()
	if e != nil {
		return e
	}
	if opts.Fast && in.projectionsAgree(gp, opts) {
		return nil
	}
	return in.fullCompare(gp, opts, order)
}

// projectionsAgree compares vᵀJu for random v (over the outputs) and u (per
// checked input) with the directional finite difference along u. A
// disagreement, or a run that fails, is not a verdict: the caller then
// compares the full Jacobians, which also says where the problem is.
func (in *instance) projectionsAgree(gp *gradProgram, opts Options) bool {
	r := newRand(opts.Seed, streamProjection)
	vNorm := 0.0
	for _, s := range gp.seeds {
		copy(s.Float64s(), randomDense(r, s.Shape()).Float64s())
		vNorm += sumSquares(s.Float64s())
	}
	us := make([][]float64, len(in.checked))
	for ci, i := range in.checked {
		us[ci] = randomDense(r, in.vals[i].Shape()).Float64s()
	}
	analytic := make([]float64, len(in.checked))
	if err := gp.run(func(ci int, grad []float64) { analytic[ci] = dot(grad, us[ci]) }); err != nil {
		return false
	}
	plus, minus := in.outputBuffers(), in.outputBuffers()
	for ci, i := range in.checked {
		x, u := in.vals[i].Float64s(), us[ci]
		orig := slices.Clone(x)
		for j := range x {
			x[j] = orig[j] + opts.Eps*u[j]
		}
		errPlus := in.eval(plus)
		for j := range x {
			x[j] = orig[j] - opts.Eps*u[j]
		}
		errMinus := in.eval(minus)
		copy(x, orig)
		if errPlus != nil || errMinus != nil {
			return false
		}
		numeric := 0.0
		for k := range plus {
			for a := range plus[k] {
				numeric += gp.seeds[k].Float64s()[a] * (plus[k][a] - minus[k][a]) / (2 * opts.Eps)
			}
		}
		tol := opts.Atol*math.Sqrt(vNorm*sumSquares(u)) + opts.Rtol*math.Abs(numeric)
		if !(math.Abs(analytic[ci]-numeric) <= tol) {
			return false
		}
	}
	return true
}

// firstErr returns a if it is not nil, else b.
func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// dot is the inner product of equal-length a and b.
func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func sumSquares(a []float64) float64 { return dot(a, a) }

// fullCompare computes both Jacobians entry by entry and reports the first
// (input, output) pair that disagrees, with its worst entries.
func (in *instance) fullCompare(gp *gradProgram, opts Options, order Problem) *Error {
	analytic, e := in.analyticJacobian(gp)
	if e != nil {
		return e
	}
	numeric, e := in.numericJacobian(opts.Eps)
	if e != nil {
		return e
	}
	var first *Error
	var others []string
	for ci, i := range in.checked {
		n := in.vals[i].Shape()
		for k, y := range in.ys {
			bad, total := mismatches(analytic[ci][k], numeric[ci][k], opts)
			if len(bad) == 0 {
				continue
			}
			if first != nil {
				others = append(others, fmt.Sprintf("input %d/output %d", i, k))
				continue
			}
			first = &Error{Problem: order, Input: i, Output: k, outputs: len(in.ys)}
			nIn := graph.ShapeSize(n)
			for _, at := range bad[:min(len(bad), maxEntries)] {
				first.Entries = append(first.Entries, Entry{
					Output:   unravel(at/max(nIn, 1), y.Shape()),
					Input:    unravel(at%max(nIn, 1), n),
					Analytic: analytic[ci][k][at],
					Numeric:  numeric[ci][k][at],
				})
			}
			what := fmt.Sprintf("d out / d in%d differs from finite differences", i)
			if len(in.ys) > 1 {
				what = fmt.Sprintf("d out%d / d in%d differs from finite differences", k, i)
			}
			if order == SecondDerivative {
				what = fmt.Sprintf("d⟨∇f, v⟩ / d in%d (∇f the gradient of ⟨w, f⟩; w, v random) differs from finite differences of ∇f", i)
			}
			first.Detail = fmt.Sprintf("%s at %d of %d entries (eps %g, atol %g, rtol %g)",
				what, len(bad), total, opts.Eps, opts.Atol, opts.Rtol)
		}
	}
	if first != nil && len(others) > 0 {
		first.Detail += "; also mismatching: " + strings.Join(others, ", ")
	}
	return first
}

// maxEntries is how many of the worst entries an error lists.
const maxEntries = 5

// mismatches returns the offsets where a and n disagree, worst first, and
// how many entries there are.
func mismatches(a, n []float64, opts Options) (bad []int, total int) {
	excess := make([]float64, len(a))
	for j := range a {
		d := math.Abs(a[j] - n[j])
		tol := opts.Atol + opts.Rtol*math.Abs(n[j])
		if d <= tol {
			continue
		}
		excess[j] = d / tol
		if math.IsNaN(d) {
			excess[j] = math.Inf(1)
		}
		bad = append(bad, j)
	}
	slices.SortStableFunc(bad, func(x, y int) int {
		switch {
		case excess[x] > excess[y]:
			return -1
		case excess[x] < excess[y]:
			return 1
		}
		return 0
	})
	return bad, len(a)
}

// jacobian holds, per checked input ci and output k, the block of
// derivatives of output k with respect to that input, row-major: entry
// a·n + j is d out_k[a] / d in[j], where n is the input's size.
type jacobian [][][]float64

func (in *instance) newJacobian() jacobian {
	jac := make(jacobian, len(in.checked))
	for ci, i := range in.checked {
		jac[ci] = make([][]float64, len(in.ys))
		for k, y := range in.ys {
			jac[ci][k] = make([]float64, y.Type().Size()*in.vals[i].Shape().TotalSize())
		}
	}
	return jac
}

// analyticJacobian runs the gradient program once per output element, with
// that element's seed set to 1 and every other to 0.
func (in *instance) analyticJacobian(gp *gradProgram) (jacobian, *Error) {
	jac := in.newJacobian()
	for _, s := range gp.seeds {
		clear(s.Float64s())
	}
	for k, s := range gp.seeds {
		seed := s.Float64s()
		for a := range seed {
			seed[a] = 1
			err := gp.run(func(ci int, grad []float64) {
				n := len(grad)
				copy(jac[ci][k][a*n:(a+1)*n], grad)
			})
			seed[a] = 0
			if err != nil {
				return nil, fail(ForwardFailed, err, "running the gradient failed")
			}
		}
	}
	return jac, nil
}

// numericJacobian moves each checked input element by ±eps and reruns the
// forward program.
func (in *instance) numericJacobian(eps float64) (jacobian, *Error) {
	jac := in.newJacobian()
	plus, minus := in.outputBuffers(), in.outputBuffers()
	for ci, i := range in.checked {
		x := in.vals[i].Float64s()
		n := len(x)
		for j := range x {
			orig := x[j]
			x[j] = orig + eps
			errPlus := in.eval(plus)
			x[j] = orig - eps
			errMinus := in.eval(minus)
			x[j] = orig
			if err := firstErr(errPlus, errMinus); err != nil {
				return nil, &Error{Problem: ForwardFailed, Input: i, Output: -1, Err: err,
					Detail: fmt.Sprintf("a forward run with input %d element %s moved by ±%g failed",
						i, indexString(unravel(j, in.vals[i].Shape())), eps)}
			}
			for k := range in.ys {
				for a := range plus[k] {
					jac[ci][k][a*n+j] = (plus[k][a] - minus[k][a]) / (2 * eps)
				}
			}
		}
	}
	return jac, nil
}
