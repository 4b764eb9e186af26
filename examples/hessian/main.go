// Command hessian computes a gradient and a Hessian with nabla, symbolically
// and to machine precision, and uses them in Newton's method.
//
// Without flags it prints one JSON object {"x", "f", "grad", "hessian"} for
// f(x) = sum(sin(x)·x³) + log(1 + sum(x²)) at x = (0.5, −1.2, 2, 0.3).
// With -sparse n it computes the sparse Hessian of a least-squares
// boundary-value problem with n unknowns (see sparse.go).
// With -newton it minimises the Rosenbrock function from (−1.2, 1), one
// line per iterate, and exits non-zero unless it ends within 1e-8 of the
// minimum (1, 1). With -sensitivity it minimises (a−x)² + 100(y−x²)² by
// Newton's method inside one ops.While loop, for a = 1.5, and prints the
// minimiser's first and second derivatives with respect to a from
// ops.Root (the implicit function theorem) beside central finite
// differences and their exact values, exiting non-zero unless they agree
// (see sensitivity.go).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
)

// Newton's method's settings for the Rosenbrock run.
const (
	gradientTolerance = 1e-10
	maxNewtonSteps    = 100
	// minimumTolerance is how close to (1, 1) the run must end.
	minimumTolerance = 1e-8
)

var rosenbrockStart = []float64{-1.2, 1}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the command, returning its exit code.
func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("hessian", flag.ContinueOnError)
	flags.SetOutput(stderr)
	newton := flags.Bool("newton", false, "minimise the Rosenbrock function by Newton's method")
	sensitivity := flags.Bool("sensitivity", false, "minimise a parametrised Rosenbrock function inside the graph and differentiate the minimiser with respect to the parameter")
	sparse := flags.Int("sparse", 0, "compute the sparse Hessian of a discretised boundary-value problem with this many unknowns")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // -h: the usage, printed, is what was asked for
		}
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "hessian: unexpected arguments %q\n", flags.Args())
		return 2
	}
	var err error
	switch {
	case *sparse != 0:
		err = runSparse(stdout, *sparse)
	case *newton:
		err = runNewton(stdout)
	case *sensitivity:
		err = runSensitivity(stdout)
	default:
		err = printEvaluation(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "hessian:", err)
		return 1
	}
	return 0
}

func printEvaluation(w io.Writer) error {
	r, err := Evaluate(ExamplePoint)
	if err != nil {
		return err
	}
	return json.NewEncoder(w).Encode(r)
}

func runNewton(w io.Writer) error {
	e, err := NewEvaluator(2, Rosenbrock)
	if err != nil {
		return err
	}
	x, err := Newton(e, rosenbrockStart, gradientTolerance, maxNewtonSteps, func(k int, r Result) {
		fmt.Fprintf(w, "iter %2d  x = (%.15f, %.15f)  f = %.6e  |grad| = %.3e\n", k, r.X[0], r.X[1], r.F, norm(r.Grad))
	})
	if err != nil {
		return err
	}
	if d := math.Hypot(x[0]-1, x[1]-1); !(d < minimumTolerance) {
		return fmt.Errorf("Newton's method ended at (%v, %v), %.3g from the minimum (1, 1)", x[0], x[1], d)
	}
	return nil
}
