package nn

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unsafe"

	"github.com/nabla-go/nabla/graph"
)

// Module is one part of a model: it builds its piece of the graph, and owns
// the parameters (trainable graph.Param nodes) and buffers (non-trainable
// state that also lives in the machine, such as a dropout step counter)
// that piece reads.
//
// A module holds its parameters and buffers, and its child modules, in
// fields; NamedParameters, NamedBuffers and Modules find them by walking
// those fields with reflection, exported or not:
//
//   - a *graph.Node field holding a parameter is a parameter, or a buffer
//     when tagged `nn:",buffer"`;
//   - a field holding a Module is a child module, whose own parameters are
//     found the same way;
//   - slices, arrays and maps of either (maps in sorted key order), and
//     plain structs holding them, are walked too; element i of a field
//     "layers" is named "layers.i";
//   - a Sequential names each layer by the name it was given (a Linear
//     made with name "fc1" is "fc1", so its weight is "fc1.weight" in the
//     graph and in checkpoints alike), or by its index when it has no name
//     or shares it with another layer, as PyTorch's Sequential does;
//   - `nn:"name"` renames a field, `nn:"-"` hides it; a field's default name
//     is its Go name in snake case ("RunningMean" is "running_mean").
//
// Pointers to values that are not modules are not followed, so a module may
// keep its *graph.Graph or other references freely. A module reached twice
// (weight tying) contributes its parameters once, under the first name.
//
// Each Forward builds its nodes inside a graph scope named after the module
// (graph.Graph.Scope), so DOT export draws modules as clusters.
type Module interface {
	// Forward builds the module's output from x. Errors are sticky, as in
	// the rest of nabla: a mistake records an error on x's graph and
	// returns a poisoned node.
	Forward(x *graph.Node) *graph.Node
}

// Describer is implemented by modules that describe their configuration
// when printed, as PyTorch's extra_repr: Linear describes itself as
// "in_features=64, out_features=10, bias=true".
type Describer interface {
	Describe() string
}

// Named is a parameter, buffer or other machine-held node with the dotted
// name it has in a module tree ("layers.0.weight").
type Named struct {
	Name string
	Node *graph.Node
}

// NamedModule is a module with its dotted name in a module tree ("" for
// the root).
type NamedModule struct {
	Name   string
	Module Module
}

// Parameters returns m's trainable parameters, its own and its
// descendants', in the order of NamedParameters.
func Parameters(m Module) []*graph.Node { return nodesOf(NamedParameters(m)) }

// NamedParameters returns m's trainable parameters with their dotted names:
// as in PyTorch, a module's own before its children's, each in field order.
func NamedParameters(m Module) []Named { return collect(m, memberParam) }

// Buffers returns m's buffers: state that lives in the machine but is not
// trained.
func Buffers(m Module) []*graph.Node { return nodesOf(NamedBuffers(m)) }

// NamedBuffers returns m's buffers with their dotted names.
func NamedBuffers(m Module) []Named { return collect(m, memberBuffer) }

// StateOf returns everything of m that a checkpoint holds: its named
// parameters followed by its named buffers.
func StateOf(m Module) []Named { return append(NamedParameters(m), NamedBuffers(m)...) }

// Modules returns m and all its descendant modules with their dotted names,
// m first, each module once.
func Modules(m Module) []NamedModule {
	var out []NamedModule
	walkTree(m, func(prefix string, mod Module, _ []member) {
		out = append(out, NamedModule{Name: prefix, Module: mod})
	})
	return out
}

// Prefix returns state with prefix and a dot before each name, to keep the
// names of several sources (a model, an optimiser) apart in one checkpoint.
func Prefix(prefix string, state []Named) []Named {
	out := make([]Named, len(state))
	for i, s := range state {
		out[i] = Named{Name: join(prefix, s.Name), Node: s.Node}
	}
	return out
}

func nodesOf(named []Named) []*graph.Node {
	out := make([]*graph.Node, len(named))
	for i, n := range named {
		out[i] = n.Node
	}
	return out
}

// collect returns the members of the given kind from m's whole tree, each
// node once.
func collect(m Module, kind memberKind) []Named {
	var out []Named
	seen := map[*graph.Node]bool{}
	walkTree(m, func(prefix string, _ Module, members []member) {
		for _, e := range members {
			if e.kind == kind && !seen[e.node] {
				seen[e.node] = true
				out = append(out, Named{Name: join(prefix, e.name), Node: e.node})
			}
		}
	})
	return out
}

// walkTree calls visit for m and each descendant module, depth first in
// field order, with its dotted name and its direct members. A module held
// by pointer is visited once, however many times it is reached.
func walkTree(m Module, visit func(prefix string, m Module, members []member)) {
	seen := map[uintptr]bool{}
	var rec func(prefix string, m Module)
	rec = func(prefix string, m Module) {
		if v := reflect.ValueOf(m); v.Kind() == reflect.Pointer {
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
		}
		members := directMembers(m)
		visit(prefix, m, members)
		for _, e := range members {
			if e.kind == memberModule {
				rec(join(prefix, e.name), e.module)
			}
		}
	}
	if m != nil {
		rec("", m)
	}
}

type memberKind uint8

const (
	memberParam memberKind = iota
	memberBuffer
	memberModule
)

// container is implemented by modules that name their children
// themselves (Sequential) rather than by their fields.
type container interface {
	members() []member
}

// member is one thing a module holds directly: a parameter, a buffer or a
// child module, named relative to the module.
type member struct {
	name   string
	kind   memberKind
	node   *graph.Node
	module Module
}

var (
	moduleType = reflect.TypeFor[Module]()
	nodeType   = reflect.TypeFor[*graph.Node]()
)

// directMembers walks m's fields (not its children's) for parameters,
// buffers and child modules.
func directMembers(m Module) []member {
	if c, ok := m.(container); ok {
		return c.members()
	}
	v := reflect.ValueOf(m)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	var w memberWalker
	w.fields("", v)
	return w.members
}

type memberWalker struct {
	members []member
}

// fields walks the fields of the struct v.
func (w *memberWalker) fields(prefix string, v reflect.Value) {
	if !v.CanAddr() {
		// Make the struct addressable, so that unexported fields can be
		// read below.
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		v = c
	}
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, buffer, skip := fieldName(f)
		if skip || !mayHold(f.Type, map[reflect.Type]bool{}) {
			continue
		}
		fv := v.Field(i)
		if !f.IsExported() {
			fv = reflect.NewAt(f.Type, unsafe.Pointer(fv.UnsafeAddr())).Elem()
		}
		if f.Anonymous && !f.Type.Implements(moduleType) && f.Type.Kind() == reflect.Struct && f.Tag.Get("nn") == "" {
			w.fields(prefix, fv) // an embedded helper struct: its fields are the module's
			continue
		}
		w.value(join(prefix, name), fv, buffer)
	}
}

// value walks one value found at the given name.
func (w *memberWalker) value(name string, v reflect.Value, buffer bool) {
	if v.Type() == nodeType {
		n, _ := v.Interface().(*graph.Node)
		if n != nil && n.Kind() == graph.KindParam && n.Err() == nil {
			kind := memberParam
			if buffer {
				kind = memberBuffer
			}
			w.members = append(w.members, member{name: name, kind: kind, node: n})
		}
		return
	}
	if v.Type().Implements(moduleType) {
		if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
			return
		}
		if m, ok := v.Interface().(Module); ok {
			w.members = append(w.members, member{name: name, kind: memberModule, module: m})
		}
		return
	}
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			w.value(name, v.Elem(), buffer)
		}
	case reflect.Struct:
		w.fields(name, v)
	case reflect.Slice, reflect.Array:
		if !mayHold(v.Type().Elem(), map[reflect.Type]bool{}) {
			return
		}
		for i := range v.Len() {
			w.value(join(name, strconv.Itoa(i)), v.Index(i), buffer)
		}
	case reflect.Map:
		if !mayHold(v.Type().Elem(), map[reflect.Type]bool{}) {
			return
		}
		for _, k := range sortedKeys(v) {
			w.value(join(name, fmt.Sprint(k.Interface())), v.MapIndex(k), buffer)
		}
	}
}

// mayHold reports whether a value of type t can hold a parameter node or a
// module that the walk would find, so that large slices of numbers and
// foreign structs are skipped without being visited.
func mayHold(t reflect.Type, visiting map[reflect.Type]bool) bool {
	if t == nodeType || t.Implements(moduleType) || t.Kind() == reflect.Interface {
		return true
	}
	if visiting[t] {
		return false // a recursive type: its other paths decide
	}
	visiting[t] = true
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return mayHold(t.Elem(), visiting)
	case reflect.Struct:
		for i := range t.NumField() {
			if mayHold(t.Field(i).Type, visiting) {
				return true
			}
		}
	}
	return false
}

// sortedKeys returns a map's keys in order: numerically for numbers,
// lexically for strings, by their printed form otherwise.
func sortedKeys(v reflect.Value) []reflect.Value {
	keys := v.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int {
		switch {
		case a.CanInt():
			return cmp.Compare(a.Int(), b.Int())
		case a.CanUint():
			return cmp.Compare(a.Uint(), b.Uint())
		case a.CanFloat():
			return cmp.Compare(a.Float(), b.Float())
		case a.Kind() == reflect.String:
			return cmp.Compare(a.String(), b.String())
		}
		return cmp.Compare(fmt.Sprint(a.Interface()), fmt.Sprint(b.Interface()))
	})
	return keys
}

// fieldName reads a field's `nn` tag: its name, whether it holds buffers,
// and whether it is hidden from the walk.
func fieldName(f reflect.StructField) (name string, buffer, skip bool) {
	tag := f.Tag.Get("nn")
	if tag == "-" {
		return "", false, true
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = snakeCase(f.Name)
	}
	for opt := range strings.SplitSeq(opts, ",") {
		buffer = buffer || opt == "buffer"
	}
	return name, buffer, false
}

// snakeCase turns a Go field name into a checkpoint name: "RunningMean" is
// "running_mean", "LNWeight" is "ln_weight", "weight" stays "weight".
func snakeCase(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 {
			prevLower := unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])
			acronymEnd := unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || acronymEnd {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func join(prefix, name string) string {
	switch {
	case prefix == "":
		return name
	case name == "":
		return prefix
	}
	return prefix + "." + name
}

// Format prints m as a tree, as PyTorch prints a module: each module's type
// name and description (see Describer), then its children, indented.
//
//	Sequential(
//	  (fc1): Linear(in_features=64, out_features=10, bias=true)
//	  (1): ReLU()
//	)
func Format(m Module) string {
	if m == nil {
		return "<nil>"
	}
	var b strings.Builder
	format(&b, m, "", map[uintptr]bool{})
	return b.String()
}

func format(b *strings.Builder, m Module, indent string, seen map[uintptr]bool) {
	v := reflect.ValueOf(m)
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	b.WriteString(t.Name())
	b.WriteByte('(')
	if v.Kind() == reflect.Pointer && v.IsNil() {
		b.WriteByte(')')
		return
	}
	desc := ""
	if d, ok := m.(Describer); ok {
		desc = d.Describe()
	}
	var children []member
	if v.Kind() != reflect.Pointer || !seen[v.Pointer()] {
		if v.Kind() == reflect.Pointer {
			seen[v.Pointer()] = true
		}
		for _, e := range directMembers(m) {
			if e.kind == memberModule {
				children = append(children, e)
			}
		}
	}
	if len(children) == 0 {
		b.WriteString(desc)
		b.WriteByte(')')
		return
	}
	inner := indent + "  "
	b.WriteByte('\n')
	if desc != "" {
		b.WriteString(inner + desc + "\n")
	}
	for _, c := range children {
		b.WriteString(inner + "(" + c.name + "): ")
		format(b, c.module, inner, seen)
		b.WriteByte('\n')
	}
	b.WriteString(indent + ")")
}
