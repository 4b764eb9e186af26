// Command customop checks the custom ops of docs/extending.md against
// finite differences with gradcheck: first and second derivatives, and the
// op's kernel and Backward themselves for single ops (only first
// derivatives for the once-differentiable SiLU). It prints one line per
// check and exits with status 1 if one fails.
package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
)

func main() {
	if !report(os.Stdout, checks()) {
		os.Exit(1)
	}
}

// check is one named gradcheck call.
type check struct {
	name string
	run  func() error
}

func checks() []check {
	x := random(1, 4, 3)
	w := random(2, 2, 3)
	b := random(3, 2)
	var opts gradcheck.Options
	return []check{
		{"LinearFunction with bias", func() error {
			return gradcheck.CheckOp(nn.LinearFunction{}, []*tensor.Dense{x, w, b}, opts)
		}},
		{"LinearFunction without bias", func() error {
			return gradcheck.CheckOp(nn.LinearFunction{}, []*tensor.Dense{x, w}, opts)
		}},
		{"MulConstant", func() error {
			return gradcheck.CheckOp(MulConstant{C: 2.5}, []*tensor.Dense{x}, opts)
		}},
		{"Polynomial", func() error {
			return gradcheck.CheckOp(PolynomialOp{Coeffs: []float64{0.5, -1, 0.25, 0.1}}, []*tensor.Dense{x}, opts)
		}},
		{"MaxWithIndex", func() error {
			return gradcheck.CheckMultiOp(MaxWithIndexOp{Axis: 1}, []*tensor.Dense{x}, opts)
		}},
		{"SiLU, first derivatives", func() error {
			return gradcheck.Check(func(in []*graph.Node) *graph.Node { return SiLU(in[0]) }, []*tensor.Dense{x}, opts)
		}},
		{"Log1pExp", func() error {
			return bothOrders(func(in []*graph.Node) *graph.Node { return Log1pExp(in[0]) }, []*tensor.Dense{x}, opts)
		}},
		{"a chain of custom ops", func() error {
			chain := func(in []*graph.Node) *graph.Node {
				return MulConst(Log1pExp(Polynomial(nn.LinearFunc(in[0], in[1], in[2]), 0.5, -1, 0.25)), 0.7)
			}
			return bothOrders(chain, []*tensor.Dense{x, w, b}, opts)
		}},
	}
}

// bothOrders checks the first and second derivatives of fn.
func bothOrders(fn func([]*graph.Node) *graph.Node, inputs []*tensor.Dense, opts gradcheck.Options) error {
	if err := gradcheck.Check(fn, inputs, opts); err != nil {
		return err
	}
	return gradcheck.GradGradCheck(fn, inputs, opts)
}

// report runs the checks, writing one line for each (a failure's details
// follow its line, indented), and tells whether all passed.
func report(out io.Writer, checks []check) bool {
	passed := true
	for _, c := range checks {
		err := c.run()
		if err == nil {
			fmt.Fprintf(out, "ok    %s\n", c.name)
			continue
		}
		passed = false
		fmt.Fprintf(out, "FAIL  %s: %s\n", c.name, strings.ReplaceAll(err.Error(), "\n", "\n      "))
	}
	return passed
}

// random returns a float64 tensor of the given shape with values drawn
// uniformly from [-1, 1), seeded.
func random(seed uint64, shape ...int) *tensor.Dense {
	r := rand.New(rand.NewPCG(seed, 3))
	t := graph.NewDense(graph.Float64, shape...)
	for i := range t.Float64s() {
		t.Float64s()[i] = 2*r.Float64() - 1
	}
	return t
}
