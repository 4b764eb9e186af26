package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// fixtureTheta is where the tests compare derivatives (the PyTorch
// fixture's θ): not the optimum, and a point where the Hessian is
// indefinite.
var fixtureTheta = Hyperparameters{0.3, -0.2, -1.2}

func bundledData(t *testing.T) Data {
	t.Helper()
	d, _, err := loadData("")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// reference computes the NLML and its gradient in plain Go with gonum:
// K's Cholesky factorisation, α = K⁻¹y, and the textbook gradient
// ∂NLML/∂θⱼ = ½ tr((K⁻¹ − ααᵀ) ∂K/∂θⱼ) (Rasmussen and Williams, eq. 5.9),
// with ∂K/∂log ℓ = k ⊙ D/ℓ², ∂K/∂log σf = 2k, ∂K/∂log σn = 2σn² I.
func reference(d Data, theta Hyperparameters) (float64, [3]float64) {
	n := len(d.X)
	length2, signal2, noise2 := math.Exp(2*theta[0]), math.Exp(2*theta[1]), math.Exp(2*theta[2])
	k := mat.NewSymDense(n, nil)
	dk := [3]*mat.Dense{mat.NewDense(n, n, nil), mat.NewDense(n, n, nil), mat.NewDense(n, n, nil)}
	for i := range n {
		for j := range n {
			sq := (d.X[i] - d.X[j]) * (d.X[i] - d.X[j])
			kij := signal2 * math.Exp(-sq/(2*length2))
			dk[0].Set(i, j, kij*sq/length2)
			dk[1].Set(i, j, 2*kij)
			if i == j {
				kij += noise2
				dk[2].Set(i, j, 2*noise2)
			}
			if j >= i {
				k.SetSym(i, j, kij)
			}
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(k) {
		panic("reference: K is not positive-definite")
	}
	var alpha mat.VecDense
	if err := chol.SolveVecTo(&alpha, mat.NewVecDense(n, d.Y)); err != nil {
		panic(err)
	}
	f := 0.5*mat.Dot(mat.NewVecDense(n, d.Y), &alpha) + 0.5*chol.LogDet() + float64(n)/2*math.Log(2*math.Pi)
	var kinv mat.SymDense
	if err := chol.InverseTo(&kinv); err != nil {
		panic(err)
	}
	var w mat.Dense // K⁻¹ − ααᵀ
	w.Outer(-1, &alpha, &alpha)
	w.Add(&w, &kinv)
	var grad [3]float64
	for j := range 3 {
		var prod mat.Dense
		prod.Mul(&w, dk[j])
		grad[j] = 0.5 * mat.Trace(&prod)
	}
	return f, grad
}

// close says whether got is within tol of want, relative to max(1, |want|).
func close(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestDerivativesAgainstGonum(t *testing.T) {
	d := bundledData(t)
	m, err := NewModel(d, thetaStart)
	if err != nil {
		t.Fatal(err)
	}
	der, err := m.NewDerivatives()
	if err != nil {
		t.Fatal(err)
	}
	f, grad, hess, err := der.At(fixtureTheta)
	if err != nil {
		t.Fatal(err)
	}
	wantF, wantGrad := reference(d, fixtureTheta)
	if !close(f, wantF, 1e-12) {
		t.Errorf("NLML = %.17g, gonum's %.17g", f, wantF)
	}
	const h = 1e-6
	for j := range 3 {
		if !close(grad[j], wantGrad[j], 1e-10) {
			t.Errorf("∂NLML/∂θ%d = %.17g, gonum's %.17g", j, grad[j], wantGrad[j])
		}
		// Central differences of gonum's NLML, and of its gradient for the
		// Hessian's column j.
		up, down := fixtureTheta, fixtureTheta
		up[j] += h
		down[j] -= h
		fUp, gUp := reference(d, up)
		fDown, gDown := reference(d, down)
		if fd := (fUp - fDown) / (2 * h); !close(grad[j], fd, 1e-7) {
			t.Errorf("∂NLML/∂θ%d = %.12g, central differences %.12g", j, grad[j], fd)
		}
		for i := range 3 {
			if fd := (gUp[i] - gDown[i]) / (2 * h); !close(hess[i][j], fd, 1e-7) {
				t.Errorf("Hessian (%d, %d) = %.12g, central differences of the gradient %.12g", i, j, hess[i][j], fd)
			}
		}
	}
}

// torchFixture is testdata/torch_fixture.json.
type torchFixture struct {
	Theta   []float64
	NLML    float64
	Grad    []float64
	Hessian [][]float64
}

func readFixture(t *testing.T, data []byte) torchFixture {
	t.Helper()
	var fx torchFixture
	if err := json.Unmarshal(data, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Theta) != 3 || len(fx.Grad) != 3 || len(fx.Hessian) != 3 {
		t.Fatalf("fixture %+v: want θ, the gradient and the Hessian of 3", fx)
	}
	return fx
}

// TestAgainstPyTorch compares the NLML, its gradient and its Hessian with
// PyTorch's (torch.autograd.functional.hessian, float64), recorded by
// testdata/torch_fixture.py; where /usr/bin/python3 has torch, the script
// runs again (not with -short: importing torch takes seconds) and must give
// the recorded values.
func TestAgainstPyTorch(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "torch_fixture.json"))
	if err != nil {
		t.Fatal(err)
	}
	fx := readFixture(t, data)
	m, err := NewModel(bundledData(t), thetaStart)
	if err != nil {
		t.Fatal(err)
	}
	der, err := m.NewDerivatives()
	if err != nil {
		t.Fatal(err)
	}
	f, grad, hess, err := der.At(Hyperparameters(fx.Theta))
	if err != nil {
		t.Fatal(err)
	}
	if !close(f, fx.NLML, 1e-10) {
		t.Errorf("NLML = %.17g, PyTorch's %.17g", f, fx.NLML)
	}
	for i := range 3 {
		if !close(grad[i], fx.Grad[i], 1e-10) {
			t.Errorf("∂NLML/∂θ%d = %.17g, PyTorch's %.17g", i, grad[i], fx.Grad[i])
		}
		for j := range 3 {
			if !close(hess[i][j], fx.Hessian[i][j], 1e-10) {
				t.Errorf("Hessian (%d, %d) = %.17g, PyTorch's %.17g", i, j, hess[i][j], fx.Hessian[i][j])
			}
		}
	}

	if testing.Short() {
		t.Log("skipping the fixture's regeneration in -short mode")
		return
	}
	if exec.Command("/usr/bin/python3", "-c", "import torch").Run() != nil {
		t.Log("skipping the fixture's regeneration: /usr/bin/python3 has no torch")
		return
	}
	out, err := exec.Command("/usr/bin/python3", filepath.Join("testdata", "torch_fixture.py")).Output()
	if err != nil {
		t.Fatalf("testdata/torch_fixture.py: %v", err)
	}
	// The script's figures move in the last bits with PyTorch's build and
	// BLAS; a stale fixture moves far more.
	again := readFixture(t, out)
	if !close(again.NLML, fx.NLML, 1e-12) || !close(again.Hessian[2][2], fx.Hessian[2][2], 1e-12) {
		t.Errorf("testdata/torch_fixture.py gives NLML %v, Hessian (2, 2) %v; the fixture records %v, %v: regenerate it",
			again.NLML, again.Hessian[2][2], fx.NLML, fx.Hessian[2][2])
	}
}

func TestFit(t *testing.T) {
	d := bundledData(t)
	m, err := NewModel(d, thetaStart)
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.Fit()
	if err != nil {
		t.Fatal(err)
	}
	if !r.Converged || r.GradNorm >= 1e-6 {
		t.Fatalf("%s |∇|∞ = %v after %d iterations: want converged below 1e-6", r.Message, r.GradNorm, r.Iterations)
	}
	theta := Hyperparameters(r.X)
	// Stationary by gonum's gradient too.
	if _, g := reference(d, theta); math.Max(math.Abs(g[0]), math.Max(math.Abs(g[1]), math.Abs(g[2]))) >= 1e-6 {
		t.Errorf("gonum's gradient at the optimum %v is %v, want below 1e-6", theta, g)
	}
	// The data's noise is 0.2: σn's ±2 sd interval must hold it.
	der, err := m.NewDerivatives()
	if err != nil {
		t.Fatal(err)
	}
	_, _, h, err := der.At(theta)
	if err != nil {
		t.Fatal(err)
	}
	post, err := NewLaplace(theta, h)
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := math.Exp(theta[2]-2*post.SD[2]), math.Exp(theta[2]+2*post.SD[2]); !(lo < dataNoise && dataNoise < hi) {
		t.Errorf("σn's interval [%v, %v] misses the noise %v", lo, hi, dataNoise)
	}
	// The covariance is the Hessian's inverse.
	for i := range 3 {
		for j := range 3 {
			s := 0.0
			for k := range 3 {
				s += h[i][k] * post.Covariance[k][j]
			}
			if want := map[bool]float64{true: 1, false: 0}[i == j]; math.Abs(s-want) > 1e-12 {
				t.Errorf("(H·Σ)[%d][%d] = %v, want %v", i, j, s, want)
			}
		}
	}
}

// TestPredictAgainstGonum checks the posterior mean and deviation at a few
// inputs against k(xs, X)K⁻¹y and σf² − k(xs, X)K⁻¹k(X, xs) in gonum.
func TestPredictAgainstGonum(t *testing.T) {
	d := bundledData(t)
	theta := fixtureTheta
	xs := []float64{-6, -1.3, 0, 2.71}
	mean, sd, err := Predict(d, theta, xs)
	if err != nil {
		t.Fatal(err)
	}
	n := len(d.X)
	k := func(a, b float64) float64 {
		return math.Exp(2*theta[1]) * math.Exp(-(a-b)*(a-b)/(2*math.Exp(2*theta[0])))
	}
	kk := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			kk.SetSym(i, j, k(d.X[i], d.X[j]))
		}
		kk.SetSym(i, i, kk.At(i, i)+math.Exp(2*theta[2]))
	}
	var chol mat.Cholesky
	if !chol.Factorize(kk) {
		t.Fatal("K is not positive-definite")
	}
	for s, x := range xs {
		ks := mat.NewVecDense(n, nil)
		for i := range n {
			ks.SetVec(i, k(x, d.X[i]))
		}
		var a, b mat.VecDense
		if err := chol.SolveVecTo(&a, mat.NewVecDense(n, d.Y)); err != nil {
			t.Fatal(err)
		}
		if err := chol.SolveVecTo(&b, ks); err != nil {
			t.Fatal(err)
		}
		wantMean, wantSD := mat.Dot(ks, &a), math.Sqrt(k(x, x)-mat.Dot(ks, &b))
		if !close(mean[s], wantMean, 1e-10) || !close(sd[s], wantSD, 1e-8) {
			t.Errorf("at %v: mean %v sd %v, gonum's %v and %v", x, mean[s], sd[s], wantMean, wantSD)
		}
	}
}

// TestBundledDataIsGenerated checks that testdata/data.csv is what
// `-generate` writes.
func TestBundledDataIsGenerated(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, Generate(dataPoints, dataSeed, dataNoise)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), bundled) {
		t.Error("testdata/data.csv differs from what -generate writes: regenerate it")
	}
}

func TestCommand(t *testing.T) {
	dir := t.TempDir()
	plotPath := filepath.Join(dir, "gp.png")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-plot", plotPath}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr.String())
	}
	for _, want := range []string{"Optimization terminated successfully.", "Laplace posterior of θ", "log σn  =", "wrote " + plotPath} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	f, err := os.Open(plotPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", plotPath, err)
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 200 {
		t.Errorf("plot of %v pixels", b)
	}
	// A data file that is not a data set is an error, not a panic.
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("x,y\n1,oops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run([]string{"-data", bad}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), `line 2: ["1" "oops"] is not two numbers`) {
		t.Errorf("a bad CSV: exit code %d, %q", code, stderr.String())
	}
}
