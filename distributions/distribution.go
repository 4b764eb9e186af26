package distributions

import (
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Distribution is a batch of probability distributions of one family,
// each element of the batch shape an independent distribution.
type Distribution interface {
	// Sample draws one value per element of the batch from gen; it has no
	// gradient.
	Sample(gen *ops.Generator) *graph.Node
	// LogProb is the log-density (or log-mass) at x, which broadcasts
	// against the batch shape.
	LogProb(x *graph.Node) *graph.Node
	// Entropy is the differential (or Shannon) entropy, in nats.
	Entropy() *graph.Node
	// Mean is the mean, of the batch shape.
	Mean() *graph.Node
	// Variance is the variance, of the batch shape.
	Variance() *graph.Node
}

// Reparameterized is a distribution whose samples are a differentiable
// function of its parameters and of parameter-free noise.
type Reparameterized interface {
	Distribution
	// RSample draws like Sample, but the draw carries gradients to the
	// parameters.
	RSample(gen *ops.Generator) *graph.Node
}

// batch is what every distribution holds beside its parameters: the graph,
// the dtype and the batch shape, or the poisoned node that making it gave.
type batch struct {
	g     *graph.Graph
	dtype tensor.Dtype
	shape []int
	bad   *graph.Node
}

// pkgDir is this package's folder, whose frames errors skip to name the
// caller's file:line.
var pkgDir = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file) + string(filepath.Separator)
}()

// callerSite is the file:line of the first frame outside this package's
// own (non-test) files.
func callerSite() string {
	var pcs [32]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
	for {
		f, more := frames.Next()
		inside := strings.HasPrefix(f.File, pkgDir) && !strings.HasSuffix(f.File, "_test.go")
		if f.File != "" && !inside && !strings.HasPrefix(f.Function, "runtime.") {
			return filepath.Base(f.File) + ":" + strconv.Itoa(f.Line)
		}
		if !more {
			return ""
		}
	}
}

// fail records an error of function fn on g (nil: the error alone) and
// returns the poisoned node.
func fail(g *graph.Graph, fn, format string, args ...any) *graph.Node {
	return g.Fail(&graph.Error{Op: "distributions." + fn, Err: fmt.Errorf(format, args...), Site: callerSite()})
}

// newBatch checks a distribution's parameters, named by names: present,
// of one graph, of one float dtype and of shapes that broadcast together.
func newBatch(fn string, names []string, params ...*graph.Node) batch {
	b := newParams(fn, names, params...)
	if b.bad != nil {
		return b
	}
	for i, p := range params {
		shape, ok := broadcast(b.shape, p.Shape())
		if !ok {
			return batch{bad: fail(b.g, fn, "the shapes of %s, %s, do not broadcast together", strings.Join(names[:i+1], ", "), shapes(params[:i+1]))}
		}
		b.shape = shape
	}
	return b
}

// newParams checks a distribution's parameters, named by names: present,
// of one graph and of one float dtype. The batch's shape is the first
// parameter's.
func newParams(fn string, names []string, params ...*graph.Node) batch {
	var g *graph.Graph
	for i, p := range params {
		if p == nil {
			continue
		}
		if bad := graph.Poisoned(p); bad != nil {
			return batch{bad: bad}
		}
		if g == nil {
			g = p.Graph()
		} else if p.Graph() != g {
			return batch{bad: fail(g, fn, "%s and %s belong to different graphs", names[0], names[i])}
		}
	}
	var b batch
	for i, p := range params {
		if p == nil {
			return batch{bad: fail(g, fn, "%s is nil", names[i])}
		}
		t := p.Type()
		switch {
		case !graph.IsFloat(t.DType):
			return batch{bad: fail(g, fn, "%s is %v: want float32 or float64", names[i], t)}
		case i == 0:
			b = batch{g: g, dtype: t.DType, shape: t.Shape}
		case t.DType != b.dtype:
			return batch{bad: fail(g, fn, "%s is %v but %s is %v: the dtypes differ", names[i], t, names[0], params[0].Type())}
		}
	}
	return b
}

// shapes lists the nodes' shapes for an error.
func shapes(nodes []*graph.Node) string {
	s := make([]string, len(nodes))
	for i, n := range nodes {
		s[i] = graph.ShapeString(n.Shape())
	}
	return strings.Join(s, " and ")
}

// broadcast is NumPy's broadcast of two shapes.
func broadcast(a, b []int) ([]int, bool) {
	if len(a) < len(b) {
		a, b = b, a
	}
	out := append([]int(nil), a...)
	for i := range b {
		x, y := &out[len(a)-1-i], b[len(b)-1-i]
		switch {
		case *x == y || y == 1:
		case *x == 1:
			*x = y
		default:
			return nil, false
		}
	}
	return out, true
}

// check returns the poisoned node of a distribution that failed to be
// made, or an error for a zero value, or nil.
func (b batch) check(family string) *graph.Node {
	switch {
	case b.bad != nil:
		return b.bad
	case b.g == nil:
		return fail(nil, family, "the distribution is a zero value: make it with New%s", family)
	}
	return nil
}

// value checks a value x at which a log-density is asked: a node of the
// distribution's graph and dtype whose shape broadcasts with the batch.
func (b batch) value(family string, x *graph.Node) *graph.Node {
	if bad := b.check(family); bad != nil {
		return bad
	}
	switch {
	case x == nil:
		return fail(b.g, family+".LogProb", "the value is nil")
	case graph.Poisoned(x) != nil:
		return graph.Poisoned(x)
	case x.Graph() != b.g:
		return fail(b.g, family+".LogProb", "the value belongs to another graph")
	case x.DType() != b.dtype:
		return fail(b.g, family+".LogProb", "the value is %v, the distribution %v", x.Type(), b.dtype)
	}
	if _, ok := broadcast(b.shape, x.Shape()); !ok {
		return fail(b.g, family+".LogProb", "the value's shape %s does not broadcast with the batch shape %s", graph.ShapeString(x.Shape()), graph.ShapeString(b.shape))
	}
	return nil
}

// full broadcasts x to the batch shape.
func (b batch) full(x *graph.Node) *graph.Node {
	if graph.TypeOf(b.dtype, x.Shape()...).Equal(graph.TypeOf(b.dtype, b.shape...)) {
		return x
	}
	return ops.BroadcastTo(x, b.shape...)
}

// constant is a scalar constant of the batch's dtype.
func (b batch) constant(c float64) *graph.Node { return b.g.Scalar(c, b.dtype) }

// addConst returns x + c.
func (b batch) addConst(x *graph.Node, c float64) *graph.Node { return ops.Add(x, b.constant(c)) }

// halfLog2Pi is ½·log 2π.
var halfLog2Pi = 0.5 * math.Log(2*math.Pi)
