package optimize

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// Minimize minimises the scalar f over the parameter x of f's graph by
// method, from x's initial value. It differentiates f once with respect to
// x (compile.Grad, with compile.Hessian for Newton or compile.HVP for
// NewtonCG, appending the derivatives to the graph), compiles them and runs
// them on vm machines; the graph's other parameters keep their initial
// values and its inputs are fed from WithFeeds. x may have any shape: the
// result's X holds its elements in row-major order.
//
// A point where running the program fails (a Cholesky factorisation of a
// matrix that is not positive-definite, say) or where f or its gradient is
// not finite is outside f's domain: the line search steps back from it. At
// x's initial value it is an error, as misuse is (a nil or non-scalar f, an
// x that is not a parameter of f's graph, a bad option), named
// "optimize.Minimize" with the caller's file:line. A graph with a build
// error gives that error.
func Minimize(f, x *graph.Node, method Method, opts ...Option) (Result, error) {
	site := graph.CallerSite()
	named := func(err error) error { return callError("optimize.Minimize", site, err) }
	fail := func(err error) (Result, error) { return Result{}, named(err) }
	switch {
	case f == nil:
		return fail(errors.New("f is nil"))
	case x == nil:
		return fail(errors.New("x is nil"))
	case f.Err() != nil:
		return Result{}, f.Err() // the graph's own error, named where it arose
	}
	s, err := newSettings(opts)
	if err != nil {
		return fail(err)
	}
	if err := checkProblem(f, x, method); err != nil {
		return fail(err)
	}
	obj, err := newGraphObjective(f, x, method, s.feeds)
	if err != nil {
		return fail(err)
	}
	r, err := minimize(obj, graph.Float64s(x.Value()), method, s)
	if err != nil {
		return r, named(err)
	}
	return r, nil
}

// checkProblem says what is wrong with Minimize's f, x and method, or nil.
func checkProblem(f, x *graph.Node, method Method) error {
	switch {
	case f.Graph() != x.Graph():
		return fmt.Errorf("f (%v) and x (%v) belong to different graphs", f, x)
	case x.Kind() != graph.KindParam:
		return fmt.Errorf("x (%v) is not a parameter (Graph.Param), whose value the method moves", x)
	case len(f.Shape()) != 0:
		return fmt.Errorf("f (%v) is not a scalar", f)
	case !graph.IsFloat(f.DType()) || !graph.IsFloat(x.DType()):
		return fmt.Errorf("f (%v) and x (%v) must be float32 or float64", f, x)
	case x.Value() == nil || graph.ShapeSize(x.Shape()) == 0:
		return fmt.Errorf("x (%v) has no elements", x)
	}
	return checkMethod(method)
}

// callError is the error err of the function op called at site.
func callError(op, site string, err error) error {
	return &graph.Error{Op: op, Err: inner(err, site), Site: site}
}

// inner is err as part of a longer message: without nabla's prefixes, and
// without the caller's site that the longer message names.
func inner(err error, site string) error {
	msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "nabla: "), ": nabla: ", ": ")
	if site != "" {
		msg = strings.TrimSuffix(msg, " at "+site)
	}
	return &innerError{msg: msg, err: err}
}

type innerError struct {
	msg string
	err error
}

func (e *innerError) Error() string { return e.msg }
func (e *innerError) Unwrap() error { return e.err }

// WithFeeds gives the values of the graph's inputs, fed at every
// evaluation (Minimize only).
func WithFeeds(feeds vm.Feeds) Option {
	return func(s *settings) { s.feeds = feeds }
}

// graphObjective evaluates a graph's scalar f and its derivatives with
// respect to the parameter x on machines sharing their parameters.
type graphObjective struct {
	x, value, grad *graph.Node
	xValue         *tensor.Dense
	feeds          vm.Feeds
	fg             *vm.Machine // f and ∇f

	hessian *graph.Node // Newton's
	hm      *vm.Machine

	v, hv   *graph.Node // NewtonCG's: H·v for the input v
	hvFeeds vm.Feeds
	hvm     *vm.Machine
}

func newGraphObjective(f, x *graph.Node, method Method, feeds vm.Feeds) (*graphObjective, error) {
	grads, err := compile.Grad(f, x)
	if err != nil {
		return nil, err
	}
	o := &graphObjective{x: x, value: f, grad: grads[0], xValue: graph.NewDenseOf(x.Type()), feeds: feeds}
	if o.fg, err = machine(nil, f, o.grad); err != nil {
		return nil, err
	}
	switch method {
	case Newton:
		if o.hessian, err = compile.Hessian(f, x); err != nil {
			return nil, err
		}
		o.hm, err = machine(o.fg, o.hessian)
	case NewtonCG:
		o.v = x.Graph().Input("optimize.v", x.DType(), x.Shape()...)
		if o.hv, err = compile.HVP(f, x, o.v); err != nil {
			return nil, err
		}
		o.hvFeeds = vm.Feeds{o.v: graph.NewDenseOf(x.Type())}
		for in, val := range feeds {
			o.hvFeeds[in] = val
		}
		o.hvm, err = machine(o.fg, o.hv)
	}
	return o, err
}

// machine compiles outputs into a machine sharing share's parameters.
func machine(share *vm.Machine, outputs ...*graph.Node) (*vm.Machine, error) {
	prog, err := compile.Compile(outputs)
	if err != nil {
		return nil, err
	}
	if share == nil {
		return vm.New(prog)
	}
	return vm.New(prog, vm.SharingParams(share))
}

// runAt sets x and runs m. A program that does not read x (a constant
// Hessian) has no x to set.
func (o *graphObjective) runAt(m *vm.Machine, x []float64, feeds vm.Feeds) error {
	if slices.Contains(m.Program().Params(), o.x) {
		for i, v := range x {
			graph.SetFloat(o.xValue, i, v)
		}
		if err := m.Set(o.x, o.xValue); err != nil {
			return err
		}
	}
	return m.Run(feeds)
}

// read copies n's value on m into dst.
func read(m *vm.Machine, n *graph.Node, dst []float64) error {
	v, err := m.Value(n)
	if err != nil {
		return err
	}
	copy(dst, graph.Float64s(v))
	return nil
}

func (o *graphObjective) funcGrad(grad, x []float64) (float64, error) {
	if err := o.runAt(o.fg, x, o.feeds); err != nil {
		return 0, err
	}
	f, err := o.fg.Scalar(o.value)
	if err != nil {
		return 0, err
	}
	return f, read(o.fg, o.grad, grad)
}

func (o *graphObjective) hess(h, x []float64) error {
	if err := o.runAt(o.hm, x, o.feeds); err != nil {
		return err
	}
	return read(o.hm, o.hessian, h)
}

func (o *graphObjective) hessVec(hv, x, v []float64) error {
	vValue := o.hvFeeds[o.v]
	for i, e := range v {
		graph.SetFloat(vValue, i, e)
	}
	if err := o.runAt(o.hvm, x, o.hvFeeds); err != nil {
		return err
	}
	return read(o.hvm, o.hv, hv)
}
