package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// TestReadmeShowsThisExample: the README's quick start is this file's
// main body, line for line.
func TestReadmeShowsThisExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "## Quick start\n\n```go\n")
	if !ok {
		t.Fatal("README has no quick-start Go block")
	}
	block, _, _ := strings.Cut(rest, "```")
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(src), "func main() {\n")
	body, _, _ = strings.Cut(body, "\n}\n")
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	if got, want := strings.TrimSpace(block), strings.TrimSpace(strings.Join(lines, "\n")); got != want {
		t.Errorf("README quick start differs from main.go:\nREADME:\n%s\nmain.go:\n%s", got, want)
	}
}

// TestOutput: sum(tanh(x·W)²) at x = (1,2,3), W = (0.5,-1,2) is
// tanh(0.5)² + tanh(-2)² + tanh(6)² = 2.1429, and its gradient
// 2·tanh(xᵢWᵢ)·(1 - tanh²(xᵢWᵢ))·xᵢ is (0.7269, -0.2724, 0.0001).
func TestOutput(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	main()
	os.Stdout = stdout
	w.Close()
	var out bytes.Buffer
	if _, err := io.Copy(&out, r); err != nil {
		t.Fatal(err)
	}
	want := "loss 2.1429\ndloss/dW [0.7269 -0.2724 0.0001]\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}
