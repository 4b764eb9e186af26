// Package sweep calls a package's exported builders through reflect with
// hostile arguments (nil nodes, nodes of another graph, other dtypes, rank
// 0, empty and rank-8 shapes, negative and huge ints, NaN and infinite
// floats, nil and empty slices, zero option structs, callbacks returning
// nil or foreign nodes) and checks that none panics, that an error names
// the builder and the caller's file:line, and that what builds has a sound
// type, compiles, runs and differentiates without a panic.
package sweep

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Chooser picks an index below n (0 for n ≤ 1).
type Chooser interface{ IntN(n int) int }

// Bytes is a Chooser reading a fuzz input a byte at a time (0 past its end).
type Bytes struct {
	b []byte
	i int
}

// NewBytes is a Chooser over b.
func NewBytes(b []byte) *Bytes { return &Bytes{b: b} }

// IntN is the next byte modulo n.
func (c *Bytes) IntN(n int) int {
	if n <= 1 || c.i >= len(c.b) {
		return 0
	}
	v := int(c.b[c.i])
	c.i++
	return v % n
}

// world is the graphs of one call: g, where the arguments' nodes live, and
// other, a second graph whose node is a foreign argument.
type world struct {
	g, other *graph.Graph
	nodes    []arg // the node pool, nil first
	foreign  *graph.Node
}

// arg is a value with the words that describe it in a failure.
type arg struct {
	v    reflect.Value
	desc string
}

var (
	nodeType  = reflect.TypeFor[*graph.Node]()
	nodesType = reflect.TypeFor[[]*graph.Node]()
	errType   = reflect.TypeFor[error]()
	dtypeType = reflect.TypeFor[tensor.Dtype]()
	typeType  = reflect.TypeFor[graph.Type]()
	graphType = reflect.TypeFor[*graph.Graph]()
)

// newWorld builds the node pool: the shapes ops take (vectors, matrices,
// square matrices, images and convolution weights), both float dtypes,
// integer labels, rank 0, empty dimensions, rank 8, a constant of NaN and
// ±Inf, and a node of another graph.
func newWorld() *world {
	w := &world{g: graph.New(), other: graph.New()}
	in := func(dtype tensor.Dtype, shape ...int) {
		n := w.g.Input(fmt.Sprintf("x%d", len(w.nodes)), dtype, shape...)
		w.nodes = append(w.nodes, arg{reflect.ValueOf(n), n.Type().String()})
	}
	w.nodes = append(w.nodes, arg{reflect.ValueOf((*graph.Node)(nil)), "nil node"})
	f64, f32 := graph.Float64, graph.Float32
	in(f64)
	in(f64, 3)
	in(f64, 2, 3)
	in(f64, 3, 3)
	in(f64, 2, 3, 3)
	in(f64, 1, 2, 5, 5)
	in(f64, 3, 2, 3, 3)
	in(f64, 1, 2, 6)
	in(f64, 3, 2, 3)
	in(f64, 2)
	in(f32, 3, 3)
	in(f32, 1, 2, 5, 5)
	in(graph.Int64, 3)
	in(graph.Int32, 2, 3)
	in(f64, 0)
	in(f64, 3, 0)
	in(f64, 0, 2, 5, 5)
	in(f64, 1, 1, 1, 1, 1, 1, 2, 2)
	bad, _ := graph.FromFloat64s(f64, []float64{math.NaN(), math.Inf(1), math.Inf(-1)}, 3)
	c := w.g.Const(bad)
	w.nodes = append(w.nodes, arg{reflect.ValueOf(c), "const [NaN +Inf -Inf]"})
	w.foreign = w.other.Input("foreign", f64, 3, 3)
	w.nodes = append(w.nodes, arg{reflect.ValueOf(w.foreign), "float64(3,3) of another graph"})
	return w
}

// Extra gives more values of one type (option constructors, ops,
// generators of g), made afresh for each argument.
type Extra func(g *graph.Graph) []any

var (
	ints    = []int{0, 1, 2, 3, -1, -2, -3, 7, 8, 9, math.MaxInt, math.MinInt, 1 << 40}
	int64s  = []int64{0, 1, 3, -1, math.MaxInt64, math.MinInt64}
	uint64s = []uint64{0, 1, 7, math.MaxUint64}
	floats  = []float64{0, 1, -1, 0.5, 1e-8, math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64}
	dtypes  = []tensor.Dtype{graph.Float64, graph.Float32, graph.Int32, graph.Int64, tensor.Bool, tensor.Uint8, tensor.Complex128, {}}
)

// picker draws arguments for one call.
type picker struct {
	c     Chooser
	w     *world
	extra map[reflect.Type]Extra
	same  int // when above 0, every node argument is node same
}

// pick draws a value of type t.
func (p *picker) pick(t reflect.Type) arg {
	if e, ok := p.extra[t]; ok {
		vs := e(p.w.g)
		if i := p.c.IntN(len(vs) + 1); i < len(vs) {
			v := reflect.ValueOf(vs[i])
			if !v.IsValid() { // a nil interface
				return arg{reflect.Zero(t), "nil " + t.String()}
			}
			return describe(v, t)
		}
	}
	switch {
	case t == nodeType:
		if p.same > 0 {
			return p.w.nodes[p.same]
		}
		return p.w.nodes[p.c.IntN(len(p.w.nodes))]
	case t == graphType:
		gs := []*graph.Graph{p.w.g, p.w.g, nil, p.w.other, new(graph.Graph)}
		i := p.c.IntN(len(gs))
		return arg{reflect.ValueOf(gs[i]), []string{"g", "g", "nil graph", "another graph", "zero graph"}[i]}
	case t == dtypeType:
		return describe(reflect.ValueOf(dtypes[p.c.IntN(len(dtypes))]), t)
	case t == typeType:
		ts := []graph.Type{{}, graph.TypeOf(graph.Float64, 3, 3), {DType: graph.Float64, Shape: []int{-1}},
			{DType: graph.Float64, Shape: []int{math.MaxInt, 2}}, {Shape: []int{3}}, graph.TypeOf(graph.Float32, 1, 1, 1, 1, 1, 1, 1, 1, 1)}
		return describe(reflect.ValueOf(ts[p.c.IntN(len(ts))]), t)
	}
	switch t.Kind() {
	case reflect.Int:
		return describe(reflect.ValueOf(ints[p.c.IntN(len(ints))]).Convert(t), t)
	case reflect.Int64:
		return describe(reflect.ValueOf(int64s[p.c.IntN(len(int64s))]).Convert(t), t)
	case reflect.Uint64, reflect.Uint32, reflect.Uint:
		return describe(reflect.ValueOf(uint64s[p.c.IntN(len(uint64s))]).Convert(t), t)
	case reflect.Float64, reflect.Float32:
		return describe(reflect.ValueOf(floats[p.c.IntN(len(floats))]).Convert(t), t)
	case reflect.Bool:
		return describe(reflect.ValueOf(p.c.IntN(2) == 1).Convert(t), t)
	case reflect.String:
		return describe(reflect.ValueOf([]string{"", "x", "a b\x00"}[p.c.IntN(3)]).Convert(t), t)
	case reflect.Slice:
		return p.slice(t)
	case reflect.Struct:
		v := reflect.New(t).Elem()
		if p.c.IntN(3) > 0 { // else the zero struct
			for i := range t.NumField() {
				if t.Field(i).IsExported() && p.c.IntN(2) == 1 {
					v.Field(i).Set(p.pick(t.Field(i).Type).v)
				}
			}
		}
		return describe(v, t)
	case reflect.Pointer:
		if p.c.IntN(3) == 0 {
			return arg{reflect.Zero(t), "nil " + t.String()}
		}
		v := reflect.New(t.Elem())
		if t.Elem().Kind() == reflect.Struct {
			v.Elem().Set(p.pick(t.Elem()).v)
		}
		return describe(v, t)
	case reflect.Func:
		return p.callback(t)
	case reflect.Interface:
		if t.NumMethod() == 0 && p.c.IntN(2) == 1 {
			return p.pick(nodeType)
		}
		return arg{reflect.Zero(t), "nil " + t.String()}
	}
	return arg{reflect.Zero(t), "zero " + t.String()}
}

// slice draws nil, an empty slice, or one to nine elements.
func (p *picker) slice(t reflect.Type) arg {
	lens := []int{-1, 0, 1, 1, 2, 2, 3, 9}
	n := lens[p.c.IntN(len(lens))]
	if n < 0 {
		return arg{reflect.Zero(t), "nil " + t.String()}
	}
	v := reflect.MakeSlice(t, n, n)
	var words []string
	for i := range n {
		a := p.pick(t.Elem())
		v.Index(i).Set(a.v)
		words = append(words, a.desc)
	}
	return arg{v, "[" + strings.Join(words, ", ") + "]"}
}

// describe names v for a failure message.
func describe(v reflect.Value, t reflect.Type) arg {
	if t == dtypeType {
		d := v.Interface().(tensor.Dtype)
		if d.Type == nil {
			return arg{v, "zero Dtype"}
		}
		return arg{v, d.String()}
	}
	if v.Kind() == reflect.Func {
		return arg{v, t.String() + " option"}
	}
	return arg{v, fmt.Sprintf("%+v", v.Interface())}
}

// callbackModes are what a callback does with the nodes it is given.
var callbackModes = []string{"returns its arguments", "negates its arguments", "returns nil", "returns a node of another graph", "sums its arguments", "drops one", "repeats them"}

// callback makes a function of type t (a loop body, a branch, a root's
// function) that answers in one of callbackModes: it takes the first
// *graph.Node or []*graph.Node it is given as its source.
func (p *picker) callback(t reflect.Type) arg {
	mode := p.c.IntN(len(callbackModes))
	foreign := p.w.foreign
	f := reflect.MakeFunc(t, func(in []reflect.Value) []reflect.Value {
		var src []*graph.Node
		for _, v := range in {
			if v.Type() == nodeType {
				src = []*graph.Node{v.Interface().(*graph.Node)}
				break
			}
			if v.Type() == nodesType {
				src = v.Interface().([]*graph.Node)
				break
			}
		}
		var res []*graph.Node
		switch mode {
		case 0:
			res = src
		case 1, 4:
			for _, n := range src {
				if mode == 1 {
					res = append(res, ops.Neg(n))
				} else {
					res = append(res, ops.Sum(n))
				}
			}
		case 3:
			res = []*graph.Node{foreign}
		case 5:
			if len(src) > 0 {
				res = src[:len(src)-1]
			}
		case 6:
			res = append(append(res, src...), src...)
		}
		out := make([]reflect.Value, t.NumOut())
		for i := range out {
			switch ot := t.Out(i); ot {
			case nodeType:
				var n *graph.Node
				if len(res) > 0 {
					n = res[0]
				}
				out[i] = reflect.ValueOf(n)
			case nodesType:
				out[i] = reflect.ValueOf(res)
			default:
				out[i] = reflect.Zero(ot)
			}
		}
		return out
	})
	return arg{f, "a " + t.String() + " that " + callbackModes[mode]}
}
