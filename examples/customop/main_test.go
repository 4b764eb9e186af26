package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
)

// TestChecksPass: every check of the example passes, one line each.
func TestChecksPass(t *testing.T) {
	var out bytes.Buffer
	cs := checks()
	require.True(t, report(&out, cs), out.String())
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, len(cs))
	for i, c := range cs {
		require.Equal(t, "ok    "+c.name, lines[i])
	}
}

// wrongMulConstant has MulConstant's kernel but a Backward off by a factor 2.
type wrongMulConstant struct{ MulConstant }

func (op wrongMulConstant) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{MulConst(g, 2*op.C)}
}

// TestReportFailure: a wrong gradient makes its check's line say FAIL,
// with gradcheck's details indented below it, and report false.
func TestReportFailure(t *testing.T) {
	x := random(1, 2, 2)
	var out bytes.Buffer
	passed := report(&out, []check{
		{"right", func() error { return gradcheck.CheckOp(MulConstant{C: 3}, []*tensor.Dense{x}, gradcheck.Options{}) }},
		{"wrong", func() error {
			return gradcheck.CheckOp(wrongMulConstant{MulConstant{C: 3}}, []*tensor.Dense{x}, gradcheck.Options{})
		}},
	})
	require.False(t, passed)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Equal(t, "ok    right", lines[0])
	require.True(t, strings.HasPrefix(lines[1], "FAIL  wrong: gradcheck: CheckOp"), lines[1])
	for _, l := range lines[2:] {
		require.True(t, strings.HasPrefix(l, "      "), "detail lines are indented: %q", l)
	}
}

// TestSiLUSecondDerivativeCheckFails: gradcheck's second-order check of a
// once-differentiable op reports the compile error that names it.
func TestSiLUSecondDerivativeCheckFails(t *testing.T) {
	err := gradcheck.GradGradCheck(func(in []*graph.Node) *graph.Node { return SiLU(in[0]) }, []*tensor.Dense{random(1, 3)}, gradcheck.Options{})
	require.ErrorContains(t, err, "op SiLU is once-differentiable")
}
