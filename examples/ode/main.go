// Command ode fits the physical parameters of a damped oscillator to noisy
// observations by differentiating through its numerical integration.
//
// The oscillator d²x/dt² = -k·x - c·dx/dt is integrated by 1000 RK4 steps inside
// one ops.Scan (the graph holds one step, whatever the number of steps).
// Observations of x every 10 steps are made from k = 4, c = 0.3 with
// Gaussian noise; starting from k = 2.5, c = 0.8, Adam fits (k, c) by the
// gradient of the mean squared error, which flows back through all 1000
// steps. It then prints the Hessian of the error with respect to (k, c) —
// second derivatives through the Scan — beside central finite differences
// of the gradient, and exits non-zero if they disagree.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// The problem's true parameters, the noise, the start and the fit.
const (
	trueK, trueC   = 4.0, 0.3
	noise          = 0.05
	startK, startC = 2.5, 0.8
	// hessianTolerance bounds the relative difference between the
	// Hessian and finite differences of the gradient.
	hessianTolerance = 1e-6
)

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("ode", flag.ContinueOnError)
	flags.SetOutput(stderr)
	iters := flags.Int("iters", 300, "Adam iterations")
	lr := flags.Float64("lr", 0.05, "Adam's learning rate")
	seed := flags.Uint64("seed", 1, "seed of the observation noise")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // -h: the usage, printed, is what was asked for
		}
		return 2
	}
	if err := fitAndReport(stdout, DefaultProblem, *iters, *lr, *seed); err != nil {
		fmt.Fprintln(stderr, "ode:", err)
		return 1
	}
	return 0
}

func fitAndReport(w io.Writer, p Problem, iters int, lr float64, seed uint64) error {
	obs := p.Observe(trueK, trueC, noise, seed)
	fmt.Fprintf(w, "damped oscillator x'' = -k x - c x', %d RK4 steps of %g in one Scan, %d noisy observations (sigma %g)\n",
		p.Steps, p.DT, len(obs), noise)
	fit, err := Fit(p, obs, startK, startC, iters, lr, func(it int, loss, k, c float64) {
		if it%50 == 0 || it == iters {
			fmt.Fprintf(w, "iter %4d  mse %.6f  k %.4f  c %.4f\n", it, loss, k, c)
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "fitted k %.4f  c %.4f   (true %.1f, %.1f)\n", fit.K, fit.C, trueK, trueC)
	h, fd, err := p.Hessian(obs, fit.K, fit.C)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Hessian of the mse w.r.t. (k, c), through the Scan:\n  [%12.6f %12.6f]\n  [%12.6f %12.6f]\n", h[0], h[1], h[2], h[3])
	fmt.Fprintf(w, "central differences of the gradient:\n  [%12.6f %12.6f]\n  [%12.6f %12.6f]\n", fd[0], fd[1], fd[2], fd[3])
	d := maxRelDiff(h, fd)
	fmt.Fprintf(w, "largest relative difference %.1e\n", d)
	if d > hessianTolerance {
		return fmt.Errorf("the Hessian and finite differences differ by %.1e (tolerance %.0e)", d, hessianTolerance)
	}
	return nil
}
