// Command gp fits the hyperparameters of a Gaussian-process regression by
// Newton's method with the exact Hessian of the log marginal likelihood,
// and prints the Laplace approximation of their posterior.
//
// The model: y = f(x) + ε, f ~ GP(0, k) with the RBF kernel
// k(x, x') = σf² exp(−(x − x')²/(2ℓ²)), ε ~ N(0, σn²). Its negative log
// marginal likelihood, a function of θ = (log ℓ, log σf, log σn) through a
// Cholesky factorisation of the n×n covariance, is minimised by
// optimize.Newton; the inverse of its 3×3 Hessian at the optimum is the
// covariance of θ's Laplace posterior.
//
//	go run ./examples/gp                       # the bundled 50 points
//	go run ./examples/gp -plot gp.png          # and the posterior mean ± 2σ
//	go run ./examples/gp -data mine.csv        # a CSV of x,y rows under a header
//	go run ./examples/gp -generate examples/gp/testdata/data.csv   # the bundled data, again
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/nabla-go/nabla/optimize"
)

// thetaStart is where Newton's method starts: ℓ = σf = 1, σn = 0.5.
var thetaStart = Hyperparameters{0, 0, math.Log(0.5)}

// gradientTolerance stops the fit (on |∇NLML|∞).
const gradientTolerance = 1e-9

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the command, returning its exit code.
func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("gp", flag.ContinueOnError)
	flags.SetOutput(stderr)
	dataPath := flags.String("data", "", "a CSV file of x,y rows under a header (default: the bundled testdata/data.csv)")
	plotPath := flags.String("plot", "", "plot the data and the posterior mean ± 2σ to this PNG file")
	generate := flags.String("generate", "", "write the bundled data set to this CSV file and exit")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // -h: the usage, printed, is what was asked for
		}
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "gp: unexpected arguments %q\n", flags.Args())
		return 2
	}
	var err error
	if *generate != "" {
		err = writeBundled(*generate)
	} else {
		err = fitAndReport(stdout, *dataPath, *plotPath)
	}
	if err != nil {
		fmt.Fprintln(stderr, "gp:", err)
		return 1
	}
	return 0
}

func writeBundled(path string) error {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, Generate(dataPoints, dataSeed, dataNoise)); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// loadData reads the CSV at path, or the bundled data set for "".
func loadData(path string) (Data, string, error) {
	if path == "" {
		d, err := ReadCSV(bytes.NewReader(bundled), "testdata/data.csv")
		return d, "the bundled testdata/data.csv", err
	}
	f, err := os.Open(path)
	if err != nil {
		return Data{}, "", err
	}
	defer f.Close()
	d, err := ReadCSV(f, path)
	return d, path, err
}

func fitAndReport(w io.Writer, dataPath, plotPath string) error {
	d, source, err := loadData(dataPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "GP regression, RBF kernel: %d points from %s\n", len(d.X), source)
	m, err := NewModel(d, thetaStart)
	if err != nil {
		return err
	}
	r, err := m.Fit(optimize.WithGradTol(gradientTolerance), optimize.WithCallback(func(it optimize.Iteration) bool {
		fmt.Fprintf(w, "  Newton %2d  NLML %.10f  |∇|∞ %.2e  step %.3g  shift %.3g  θ = %s\n",
			it.Iteration, it.F, it.GradNorm, it.Step, it.HessianShift, formatVector(it.X))
		return false
	}))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s %d iterations, %d evaluations of NLML and ∇NLML, %d Hessians; |∇NLML|∞ = %.2e\n",
		r.Message, r.Iterations, r.FuncEvals, r.HessEvals, r.GradNorm)
	if !r.Converged {
		return fmt.Errorf("Newton's method did not converge: %s", r.Message)
	}
	theta := Hyperparameters(r.X)
	fmt.Fprintf(w, "optimum θ̂ = (log ℓ, log σf, log σn) = %s: ℓ = %.5f, σf = %.5f, σn = %.5f; NLML(θ̂) = %.10f\n",
		formatVector(theta[:]), math.Exp(theta[0]), math.Exp(theta[1]), math.Exp(theta[2]), r.F)
	der, err := m.NewDerivatives()
	if err != nil {
		return err
	}
	_, _, h, err := der.At(theta)
	if err != nil {
		return err
	}
	post, err := NewLaplace(theta, h)
	if err != nil {
		return err
	}
	printLaplace(w, post)
	if plotPath != "" {
		if err := plotPosterior(plotPath, d, theta); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s\n", plotPath)
	}
	return nil
}

func printLaplace(w io.Writer, p Laplace) {
	fmt.Fprintln(w, "Laplace posterior of θ, N(θ̂, H⁻¹) with H the NLML's Hessian at θ̂ (flat prior on θ):")
	fmt.Fprintf(w, "  %-8s", "")
	for _, name := range thetaNames {
		fmt.Fprintf(w, " %13s", name)
	}
	fmt.Fprintln(w)
	for i, name := range thetaNames {
		fmt.Fprintf(w, "  %-8s", name)
		for j := range 3 {
			fmt.Fprintf(w, " %13.6e", p.Covariance[i][j])
		}
		fmt.Fprintln(w)
	}
	for i, name := range thetaNames {
		lo, hi := p.Mean[i]-2*p.SD[i], p.Mean[i]+2*p.SD[i]
		fmt.Fprintf(w, "  %-7s = %9.5f ± %.5f (sd); ±2 sd: %s ∈ [%.4f, %.4f]\n",
			name, p.Mean[i], p.SD[i], name[len("log "):], math.Exp(lo), math.Exp(hi))
	}
}

func formatVector(v []float64) string {
	s := "("
	for i, x := range v {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%.6f", x)
	}
	return s + ")"
}
