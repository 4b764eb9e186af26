package compile

import (
	"fmt"
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// Option configures Compile.
type Option func(*config)

type config struct {
	updates    map[*graph.Node]*graph.Node
	disabled   map[string]bool
	check      bool
	fixedDraws bool
}

// WithUpdates makes every run end by writing each expression's value into
// its parameter (Theano's updates): param ← expr. Expressions read the
// parameters' old values; all updates are written after every instruction
// has run.
func WithUpdates(updates map[*graph.Node]*graph.Node) Option {
	return func(c *config) {
		if c.updates == nil {
			c.updates = map[*graph.Node]*graph.Node{}
		}
		for p, e := range updates {
			c.updates[p] = e
		}
	}
}

// WithoutPass switches off an optional pass by name, for debugging and to
// measure what it buys: "deadcode", "constfold", "simplify", "cse",
// "solve", "lushare", "constlayout", "matmuladd", "readthrough",
// "late deadcode", "sharedmatmul", "prune", "decompshare", "fuse",
// "inplace" or "memory" (see passes.go). Unknown names are an error from
// Compile.
func WithoutPass(name string) Option {
	return func(c *config) {
		if c.disabled == nil {
			c.disabled = map[string]bool{}
		}
		c.disabled[name] = true
	}
}

// WithChecks checks the compiler's invariants after every pass (for tests).
func WithChecks() Option { return func(c *config) { c.check = true } }

// checkEveryPass turns on WithChecks for every compilation; this package's
// tests set it.
var checkEveryPass bool

// Compile builds a program computing outputs (and applying any updates) from
// the nodes of their graph. Only nodes they need are kept.
func Compile(outputs []*graph.Node, opts ...Option) (*Program, error) {
	var c config
	for _, o := range opts {
		if o != nil { // a nil option is no option
			o(&c)
		}
	}
	for name := range c.disabled {
		i := slices.IndexFunc(passes[:], func(p pass) bool { return p.name == name })
		if i < 0 {
			return nil, fmt.Errorf("nabla: Compile: unknown pass %q", name)
		}
		if passes[i].required {
			return nil, fmt.Errorf("nabla: Compile: pass %q cannot be switched off", name)
		}
	}
	g, updates, err := checkRequest(outputs, c.updates)
	if err != nil {
		return nil, err
	}
	if !c.fixedDraws {
		if err := checkDraws(outputs, updates); err != nil {
			return nil, err
		}
	}
	noteCompile(g)
	return compileGraph(g, outputs, updates, &c)
}

// compileGraph runs the passes over the function computing outputs and
// updates, lowers it, and compiles the subgraphs its ops run.
func compileGraph(g *graph.Graph, outputs []*graph.Node, updates [][2]*graph.Node, c *config) (*Program, error) {
	f := newFunction(outputs, updates)
	for _, p := range passes {
		if c.disabled[p.name] {
			continue
		}
		if err := runPass(p, f); err != nil {
			return nil, err
		}
		if c.check || checkEveryPass {
			if err := checkFunction(f); err != nil {
				return nil, fmt.Errorf("nabla: Compile: after pass %s: %v", p.name, err)
			}
		}
	}
	p := lower(f, g)
	if err := compileBodies(p, c); err != nil {
		return nil, err
	}
	return p, nil
}

// runPass runs one pass, turning a panic into an error naming the pass.
func runPass(p pass, f *function) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("nabla: Compile: pass %s panicked: %v", p.name, r)
		}
	}()
	return p.fn(f)
}

// checkRequest validates outputs and updates: healthy nodes of one graph,
// updates from parameters to expressions of the same type. It returns the
// graph and the updates ordered by parameter.
func checkRequest(outputs []*graph.Node, updates map[*graph.Node]*graph.Node) (*graph.Graph, [][2]*graph.Node, error) {
	if len(outputs) == 0 && len(updates) == 0 {
		return nil, nil, fmt.Errorf("nabla: Compile: no outputs and no updates")
	}
	var g *graph.Graph
	same := func(what string, n *graph.Node) error {
		if n == nil {
			return fmt.Errorf("nabla: Compile: %s is nil", what)
		}
		if err := n.Err(); err != nil {
			return err
		}
		if g == nil {
			g = n.Graph()
		}
		if n.Graph() != g {
			return fmt.Errorf("nabla: Compile: %s %v belongs to another graph", what, n)
		}
		return g.Err()
	}
	for i, n := range outputs {
		if err := same(fmt.Sprintf("output %d", i), n); err != nil {
			return nil, nil, err
		}
	}
	var ups [][2]*graph.Node
	for p, e := range updates {
		if err := same("updated parameter", p); err != nil {
			return nil, nil, err
		}
		if err := same(fmt.Sprintf("update of %v", p), e); err != nil {
			return nil, nil, err
		}
		if p.Kind() != graph.KindParam {
			return nil, nil, fmt.Errorf("nabla: Compile: update target %v is not a parameter", p)
		}
		if !p.Type().Equal(e.Type()) {
			return nil, nil, fmt.Errorf("nabla: Compile: update of %v has type %v, want %v", p, e.Type(), p.Type())
		}
		ups = append(ups, [2]*graph.Node{p, e})
	}
	slices.SortFunc(ups, func(a, b [2]*graph.Node) int { return a[0].ID() - b[0].ID() })
	return g, ups, nil
}
