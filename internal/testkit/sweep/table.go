package sweep

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// CheckTable fails t unless funcs holds every exported function of the
// package in the current folder (a test's), and every exported method of
// the types named in receivers (as "Type.Method"), and nothing else: a
// new function must join the sweep.
func CheckTable(t *testing.T, funcs map[string]any, receivers ...string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var found []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			if fd.Recv == nil {
				found = append(found, fd.Name.Name)
			} else if r := receiver(fd.Recv.List[0].Type); slices.Contains(receivers, r) {
				found = append(found, r+"."+fd.Name.Name)
			}
		}
	}
	if len(found) < 10 {
		t.Fatalf("found only %d exported functions: is the test in the package's folder?", len(found))
	}
	for _, name := range found {
		if _, ok := funcs[name]; !ok {
			t.Errorf("%s is exported but not in the sweep's table: add it, so that the sweep calls it", name)
		}
	}
	for name := range funcs {
		if !slices.Contains(found, name) {
			t.Errorf("the sweep's table has %s, which the package does not export", name)
		}
	}
}

// receiver is the name of a method's receiver type (T or *T).
func receiver(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// names is funcs' names in order.
func names(funcs map[string]any) []string {
	var ns []string
	for name := range funcs {
		ns = append(ns, name)
	}
	slices.Sort(ns)
	return ns
}

// Test calls each of funcs calls times with arguments drawn from a
// generator seeded by its name (the same draws at every run), each in a
// subtest of its name that stops at its first failure.
func Test(t *testing.T, funcs map[string]any, calls int, cfg Config) {
	for _, name := range names(funcs) {
		t.Run(name, func(t *testing.T) {
			if why, ok := cfg.Known[name]; ok {
				t.Skipf("known: %s", why)
			}
			var seed uint64
			for _, b := range []byte(name) {
				seed = seed*31 + uint64(b)
			}
			r := rand.New(rand.NewPCG(seed, 7))
			for range calls {
				Call(t, name, funcs[name], r, cfg)
				if t.Failed() {
					return
				}
			}
		})
	}
}

// Fuzz is a fuzz target calling the function of funcs its input's first
// byte picks with the arguments its other bytes draw; its seeds are one
// input a function.
func Fuzz(f *testing.F, funcs map[string]any, cfg Config) {
	ns := names(funcs)
	for i := range ns {
		f.Add([]byte{byte(i), 1, 2, 3, 4, 5, 6, 7, 8})
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := NewBytes(b)
		name := ns[c.IntN(len(ns))]
		if _, ok := cfg.Known[name]; ok {
			return
		}
		Call(t, name, funcs[name], c, cfg)
	})
}
