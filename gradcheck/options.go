package gradcheck

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// Options configures a check. The zero value checks every input with the
// default step and tolerances.
type Options struct {
	// Eps is the finite-difference step: each input element is moved by
	// ±Eps and the derivative estimated as (f(x+Eps) - f(x-Eps)) / 2Eps.
	// 0 means 1e-6.
	Eps float64
	// Atol is the absolute tolerance: an analytic derivative a matches a
	// numeric one n when |a - n| <= Atol + Rtol·|n|. 0 means 1e-5.
	Atol float64
	// Rtol is the relative tolerance (see Atol). 0 means 1e-3.
	Rtol float64
	// Inputs lists the inputs (by position) whose derivatives are checked;
	// the others are held at their values. nil checks every float input
	// (integer inputs, indices and labels, are always held); an empty
	// non-nil slice checks none, which leaves CheckOp checking the kernel
	// alone (for an op whose inputs are all discrete, such as OneHot).
	Inputs []int
	// Fast first compares random projections vᵀJu of the Jacobian (one
	// backward run and two forward runs per input instead of one per
	// element) and computes the full Jacobian only when a projection
	// disagrees, to diagnose the failure; its verdict is then the full
	// check's. A projection could in principle hide a mismatch that
	// cancels in it; another Seed draws other projections.
	Fast bool
	// Seed seeds every random draw: the projections of Fast, and the
	// output gradients and directions of second-order checks. Equal seeds
	// give equal checks.
	Seed uint64
	// ConvertFloat32 checks float32 inputs by converting them to float64,
	// so the function or op runs (and its float64 kernel is checked) in
	// float64. Without it a float32 input is an error: finite differences
	// with a step of 1e-6 need float64's precision.
	ConvertFloat32 bool
}

// The defaults for zero fields of Options.
const (
	DefaultEps  = 1e-6
	DefaultAtol = 1e-5
	DefaultRtol = 1e-3
)

// resolve fills in defaults and checks the options against the inputs,
// returning the positions of the inputs to check: by default the float
// ones, since integer inputs (indices, labels) have no derivative.
func (o *Options) resolve(inputs []*tensor.Dense) ([]int, error) {
	nInputs := len(inputs)
	for _, f := range []struct {
		name string
		v    *float64
		def  float64
	}{{"Eps", &o.Eps, DefaultEps}, {"Atol", &o.Atol, DefaultAtol}, {"Rtol", &o.Rtol, DefaultRtol}} {
		if *f.v < 0 || math.IsNaN(*f.v) || math.IsInf(*f.v, 0) {
			return nil, fmt.Errorf("Options.%s is %v: it must be a finite number >= 0 (0 for the default %v)", f.name, *f.v, f.def)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if o.Inputs == nil {
		all := make([]int, 0, nInputs)
		for i, t := range inputs {
			if graph.IsFloat(t.Dtype()) {
				all = append(all, i)
			}
		}
		return all, nil
	}
	seen := make([]bool, nInputs)
	for _, i := range o.Inputs {
		if i < 0 || i >= nInputs {
			return nil, fmt.Errorf("Options.Inputs names input %d, but there are %d inputs", i, nInputs)
		}
		if seen[i] {
			return nil, fmt.Errorf("Options.Inputs names input %d twice", i)
		}
		if d := inputs[i].Dtype(); graph.IsInteger(d) {
			return nil, fmt.Errorf("Options.Inputs names input %d, which is %v: integers have no derivative to check", i, d)
		}
		seen[i] = true
	}
	return append([]int(nil), o.Inputs...), nil
}

// prepareInputs returns float64, contiguous copies of the inputs (integer
// ones, held still, keep their dtype), or says why one cannot be checked.
func prepareInputs(inputs []*tensor.Dense, convert bool) ([]*tensor.Dense, error) {
	if len(inputs) == 0 {
		return nil, fmt.Errorf("no inputs: give at least one tensor")
	}
	out := make([]*tensor.Dense, len(inputs))
	for i, t := range inputs {
		if t == nil {
			return nil, fmt.Errorf("input %d is nil", i)
		}
		switch t.Dtype() {
		case graph.Float64, graph.Int32, graph.Int64:
		case graph.Float32:
			if !convert {
				return nil, fmt.Errorf("input %d is float32: finite differences need float64 "+
					"(a step of 1e-6 leaves float32 with about one significant digit); "+
					"pass float64 inputs, or set Options.ConvertFloat32 to check the op in float64", i)
			}
		default:
			return nil, fmt.Errorf("input %d has dtype %v: only float64 (or float32 with Options.ConvertFloat32) can be checked, beside integer inputs held still", i, t.Dtype())
		}
		c, err := graph.CloneDense(t)
		if err != nil {
			return nil, fmt.Errorf("input %d: %v", i, err)
		}
		out[i] = toFloat64(c)
	}
	return out, nil
}

// toFloat64 returns t itself if it is float64 or an integer, else a
// float64 copy.
func toFloat64(t *tensor.Dense) *tensor.Dense {
	if t.Dtype() != graph.Float32 {
		return t
	}
	c := graph.NewDense(graph.Float64, t.Shape()...)
	copy(c.Float64s(), graph.Float64s(t))
	return c
}

// Independent random streams, so that adding draws to one never changes
// another's values.
const (
	streamProjection = iota + 1
	streamSecondOrder
)

func newRand(seed uint64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15^stream))
}

// randomDense returns a float64 tensor of the given type with values drawn
// from ±[0.5, 1.5): bounded away from zero, so a projection weighs every
// entry, and of both signs.
func randomDense(r *rand.Rand, shape []int) *tensor.Dense {
	t := graph.NewDense(graph.Float64, shape...)
	for i := range t.Float64s() {
		v := 0.5 + r.Float64()
		if r.IntN(2) == 0 {
			v = -v
		}
		t.Float64s()[i] = v
	}
	return t
}
