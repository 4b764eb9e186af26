// Package docs_test keeps the guides' Go code identical to code that
// compiles and is tested, and holds the examples linalg.md quotes.
package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// guideSources are the files the Go blocks of extending.md are quoted
// from: the examples' sources, the seed op, the graph package's interfaces,
// and nn's Module and Linear.
func guideSources(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{
		"../examples/customop/*.go", "../nn/linear_function.go", "../graph/*.go",
		"../nn/module.go", "../nn/linear.go", "../examples/custommodule/*.go",
	} {
		matches, err := filepath.Glob(pattern)
		if err != nil || len(matches) == 0 {
			t.Fatalf("no source file matches %s (%v)", pattern, err)
		}
		files = append(files, matches...)
	}
	var sources []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, string(b))
	}
	return sources
}

// block is a fenced Go block of a Markdown file and the line it starts on.
type block struct {
	line int
	code string
}

// goBlocks returns the ```go blocks of a Markdown text.
func goBlocks(md string) []block {
	var blocks []block
	var cur *block
	for i, l := range strings.Split(md, "\n") {
		switch {
		case cur == nil && strings.TrimSpace(l) == "```go":
			cur = &block{line: i + 1}
		case cur != nil && strings.TrimSpace(l) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.code += l + "\n"
		}
	}
	return blocks
}

// drifted returns a description of each Go block of md that appears
// verbatim in none of sources.
func drifted(md string, sources []string) []string {
	var bad []string
	for _, b := range goBlocks(md) {
		found := false
		for _, s := range sources {
			found = found || strings.Contains(s, b.code)
		}
		if !found {
			bad = append(bad, fmt.Sprintf("block at line %d is in no source file:\n%s", b.line, b.code))
		}
	}
	return bad
}

// TestExtendingGuideQuotesCompiledCode: every Go block of extending.md is
// a verbatim excerpt of the examples, of nn/linear_function.go,
// nn/module.go, nn/linear.go or of package graph, which compile and are
// tested, so the guide cannot drift from the
// API.
func TestExtendingGuideQuotesCompiledCode(t *testing.T) {
	checkGuide(t, "extending.md", 10, guideSources(t))
}

// TestLinalgGuideQuotesCompiledCode: every Go block of linalg.md is a
// verbatim excerpt of linalg_example_test.go, whose examples check their
// output.
func TestLinalgGuideQuotesCompiledCode(t *testing.T) {
	b, err := os.ReadFile("linalg_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	checkGuide(t, "linalg.md", 2, []string{string(b)})
}

// checkGuide requires the Markdown file name to have at least min Go
// blocks, each a verbatim excerpt of one of sources.
func checkGuide(t *testing.T, name string, min int, sources []string) {
	t.Helper()
	md, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(goBlocks(string(md))); n < min {
		t.Fatalf("got %d Go blocks in %s, want at least %d: is the fence syntax still ```go?", n, name, min)
	}
	for _, d := range drifted(string(md), sources) {
		t.Errorf("%s: %s", name, d)
	}
}

// TestDrifted: the check finds a block that is not in the sources, and
// accepts one that is, however it sits in the file.
func TestDrifted(t *testing.T) {
	src := "package main\n\nfunc f() int {\n\treturn 1\n}\n"
	md := "Text.\n\n```go\nfunc f() int {\n\treturn 1\n}\n```\n\n" +
		"```go\nfunc f() int {\n\treturn 2\n}\n```\n\n```sh\nnot go\n```\n"
	if got := goBlocks(md); len(got) != 2 || got[0].line != 3 || got[1].code != "func f() int {\n\treturn 2\n}\n" {
		t.Fatalf("goBlocks: got %+v", got)
	}
	bad := drifted(md, []string{src})
	if len(bad) != 1 || !strings.Contains(bad[0], "line 9") {
		t.Errorf("got %q, want one drifted block at line 9", bad)
	}
}
