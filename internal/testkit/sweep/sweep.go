package sweep

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// Config tells a sweep what more it may pass and what it does with what
// builds.
type Config struct {
	// Extra gives values of types the sweep cannot make (option
	// constructors, ops); they join the values it draws for that type.
	Extra map[reflect.Type]Extra
	// Run compiles, differentiates and runs the builds that succeed.
	Run bool
	// NilOK names the functions that may return nil nodes without an
	// error (Backward's nil gradient for an input that needs none).
	NilOK map[string]bool
	// Aliases gives other names an error of a function may name instead
	// of its own (TrainingUpdates' errors name the optimiser).
	Aliases map[string][]string
	// Known holds the functions with a finding not fixed yet, and what it
	// is: Test skips them saying so, Fuzz does not call them.
	Known map[string]string
}

// runSize bounds the elements of a graph that Call runs.
const runSize = 1 << 12

// Call calls fn, the exported function called name, once with arguments
// drawn by c, and fails t if it panics, if its error does not name name
// and the line that called it, if what it builds has an unsound type, or,
// with cfg.Run, if compiling, differentiating or running that panics.
func Call(t testing.TB, name string, fn any, c Chooser, cfg Config) {
	t.Helper()
	fv := reflect.ValueOf(fn)
	ft := fv.Type()
	w := newWorld()
	p := &picker{c: c, w: w, extra: cfg.Extra}
	if c.IntN(3) == 0 { // every node argument one node: Add(x, x), Solve(a, a)
		p.same = 1 + c.IntN(len(w.nodes)-1)
	}
	var args []reflect.Value
	var words []string
	for i := range ft.NumIn() {
		if ft.IsVariadic() && i == ft.NumIn()-1 {
			for range c.IntN(4) {
				a := p.pick(ft.In(i).Elem())
				args, words = append(args, a.v), append(words, a.desc)
			}
			continue
		}
		a := p.pick(ft.In(i))
		args, words = append(args, a.v), append(words, a.desc)
	}
	call := name + "(" + strings.Join(words, ", ") + ")"
	var out []reflect.Value
	var site string
	if msg := catch(func() { site, out = thisLine(), fv.Call(args) }); msg != "" {
		t.Errorf("%s panicked: %s", call, msg)
		return
	}
	nodes, err, fromNode, why := results(out)
	if why != "" && !cfg.NilOK[name] {
		t.Errorf("%s %s", call, why)
		return
	}
	if err != nil {
		if msg := unclear(err, name, site, fromNode, cfg.Aliases[name]); msg != "" {
			t.Errorf("%s: error %q %s", call, err, msg)
		}
		return
	}
	for _, n := range nodes {
		if msg := unsound(n.Type()); msg != "" {
			t.Errorf("%s built %v: %s", call, n, msg)
			return
		}
	}
	if gerr := w.g.Err(); gerr != nil && len(nodes) > 0 {
		t.Errorf("%s returned healthy nodes but left the error %q on their graph", call, gerr)
		return
	}
	if cfg.Run && len(nodes) > 0 && small(nodes[0].Graph()) {
		if msg := catch(func() { run(t, call, nodes[0].Graph(), nodes, c) }); msg != "" {
			t.Errorf("%s: compiling, differentiating or running panicked: %s", call, msg)
		}
	}
}

// catch runs f and returns what it panicked with, and where.
func catch(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprintf("%v\n%s", r, debug.Stack())
		}
	}()
	f()
	return ""
}

// thisLine is the caller's file:line, as errors name it.
func thisLine() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}

// nextLine is the line after the caller's, as errors name it.
func nextLine() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", filepath.Base(file), line+1)
}

// results gathers the nodes a call returned and its error: an error
// returned, else the first poisoned node's (fromNode). why says what is
// wrong with results that are neither: a nil node without an error, from
// a function returning only nodes (Generator.Stream's node is its error,
// and JoinPads' nil when it says !ok).
func results(out []reflect.Value) (nodes []*graph.Node, err error, fromNode bool, why string) {
	nilNode, onlyNodes := false, true
	add := func(n *graph.Node) {
		if n == nil {
			nilNode = true
			return
		}
		nodes = append(nodes, n)
	}
	for _, v := range out {
		switch {
		case v.Type() == errType:
			if !v.IsNil() {
				err = v.Interface().(error)
			}
		case v.Type() == nodeType:
			add(v.Interface().(*graph.Node))
		case v.Type() == nodesType:
			for _, n := range v.Interface().([]*graph.Node) {
				add(n)
			}
		case v.Kind() == reflect.Map && v.Type().Elem() == nodeType:
			for it := v.MapRange(); it.Next(); {
				add(it.Value().Interface().(*graph.Node))
			}
		default:
			onlyNodes = false
		}
	}
	for _, n := range nodes {
		if err == nil && n.Err() != nil {
			err, fromNode = n.Err(), true
		}
	}
	if err == nil && nilNode && onlyNodes {
		return nodes, nil, false, "returned a nil node and no error"
	}
	return nodes, err, fromNode, ""
}

// unclear says what an error lacks: the function's name (or the name of
// the op it is a variant of: MatMul for MatMulT, Mean for MeanKeepDims), or,
// for a graph's error, the site of the call. An error sited in a callback
// (values.go) is of an op the callback built, and names it.
func unclear(err error, name, site string, graphErr bool, aliases []string) string {
	msg := err.Error()
	if strings.Contains(msg, "at values.go:") {
		return "" // the error of a node the callback built, in its name
	}
	var lacks []string
	if strings.Contains(msg, "%!") {
		lacks = append(lacks, "a fault in its formatting")
	}
	if !namesFunc(msg, name) && !slices.ContainsFunc(aliases, func(a string) bool { return strings.Contains(msg, a) }) {
		lacks = append(lacks, "the function "+name)
	}
	var gerr *graph.Error
	if errors.As(err, &gerr) {
		graphErr = true
	}
	if graphErr && !strings.Contains(msg, "at "+site) {
		lacks = append(lacks, "the caller's line "+site)
	}
	if len(lacks) == 0 {
		return ""
	}
	return "does not name " + strings.Join(lacks, " or ")
}

// namesFunc reports whether msg names the function called name (a method
// Type.Method by either name), or the function it is a variant of: MatMul
// for MatMulT, Mean for MeanKeepDims, RandomNormal for RandomNormalLike,
// Grad for GradWith.
func namesFunc(msg, name string) bool {
	for _, part := range strings.Split(name, ".") {
		for _, variant := range []string{"KeepDims", "Like", "With", "T"} {
			if base, ok := strings.CutSuffix(part, variant); ok && base != "" {
				part = base
				break
			}
		}
		if strings.Contains(msg, part) {
			return true
		}
	}
	return false
}

// unsound says what is wrong with the type of a node that built, by
// graph's rules for a leaf: no negative dimension, and elements and bytes
// an int counts (the product of the dimensions, in order, never wrapping).
func unsound(t graph.Type) string {
	if t.DType != graph.Float64 && t.DType != graph.Float32 && !graph.IsInteger(t.DType) {
		return "its dtype is not one nabla computes with"
	}
	n := 1
	for _, d := range t.Shape {
		if d < 0 {
			return "a negative dimension"
		}
		if d != 0 && n > math.MaxInt/d {
			return "its size overflows an int"
		}
		n *= d
	}
	if n > math.MaxInt/8 {
		return "its bytes overflow an int"
	}
	return ""
}

// small reports whether every node of g is small enough to run.
func small(g *graph.Graph) bool {
	for _, n := range g.Nodes() {
		if n.Type().Size() > runSize {
			return false
		}
	}
	return true
}

// run differentiates the sum of the float nodes with respect to g's float
// inputs, compiles the nodes and gradients, and runs them on values drawn
// by c. Errors are fine; Grad's must name Grad and its caller's line.
func run(t testing.TB, call string, g *graph.Graph, nodes []*graph.Node, c Chooser) {
	t.Helper()
	outs := append([]*graph.Node(nil), nodes...)
	var loss *graph.Node
	for _, n := range nodes {
		if !graph.IsFloat(n.Type().DType) || (loss != nil && loss.Type().DType != n.Type().DType) {
			continue
		}
		if s := ops.Sum(n); loss == nil {
			loss = s
		} else {
			loss = ops.Add(loss, s)
		}
	}
	var wrt []*graph.Node
	for _, n := range g.Nodes() {
		if n.Kind() == graph.KindInput && graph.IsFloat(n.Type().DType) {
			wrt = append(wrt, n)
		}
	}
	if loss != nil && loss.Err() == nil {
		site := nextLine()
		grads, err := compile.GradWith(loss, wrt, compile.ZerosIfDisconnected())
		if err != nil {
			if msg := unclear(err, "Grad", site, true, nil); msg != "" {
				t.Errorf("%s: Grad: error %q %s", call, err, msg)
			}
			return
		}
		outs = append(outs, grads...)
	}
	p, err := compile.Compile(outs, compile.WithFixedDraws())
	if err != nil {
		return
	}
	m, err := vm.New(p)
	if err != nil {
		return
	}
	feeds := vm.Feeds{}
	vals := []float64{0, 1, -1, 0.5, 2, -3}
	for _, n := range g.Nodes() {
		if n.Kind() != graph.KindInput {
			continue
		}
		x := make([]float64, n.Type().Size())
		for i := range x {
			x[i] = vals[c.IntN(len(vals))]
			if graph.IsInteger(n.Type().DType) {
				x[i] = math.Trunc(x[i])
			}
		}
		d, err := graph.FromFloat64s(n.Type().DType, x, n.Type().Shape...)
		if err != nil {
			t.Errorf("%s: feeding %v: %v", call, n, err)
			return
		}
		feeds[n] = d
	}
	_ = m.Run(feeds)
}
