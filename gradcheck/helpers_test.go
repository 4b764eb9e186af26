package gradcheck_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/graph"
)

// tensorOf builds a float64 tensor; the table is written by hand, so a
// length that does not fit the shape is a bug in the test itself.
func tensorOf(shape []int, vals ...float64) *tensor.Dense {
	t, err := graph.FromFloat64s(graph.Float64, vals, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// intsOf returns an integer tensor of the given dtype, for indices and
// labels.
func intsOf(dtype tensor.Dtype, shape []int, vals ...int64) *tensor.Dense {
	t, err := graph.FromInt64s(dtype, vals, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// values draws sample inputs from a seeded source.
type values struct{ r *rand.Rand }

func newValues(seed uint64) values { return values{rand.New(rand.NewPCG(seed, 1))} }

// uniform draws from [lo, hi).
func (v values) uniform(lo, hi float64, shape ...int) *tensor.Dense {
	vals := make([]float64, graph.ShapeSize(shape))
	for i := range vals {
		vals[i] = lo + (hi-lo)*v.r.Float64()
	}
	return tensorOf(shape, vals...)
}

// signed draws from ±[0.3, 1.3): away from 0, where Abs, ReLU, Sign and
// division have their kinks and poles.
func (v values) signed(shape ...int) *tensor.Dense {
	t := v.uniform(0.3, 1.3, shape...)
	for i := range t.Float64s() {
		if v.r.IntN(2) == 0 {
			t.Float64s()[i] *= -1
		}
	}
	return t
}

// positive draws from [0.5, 1.5), inside the domain of Log, Sqrt and Pow's
// base.
func (v values) positive(shape ...int) *tensor.Dense { return v.uniform(0.5, 1.5, shape...) }

// asCheckError returns err as a *gradcheck.Error, failing the test if it
// is not one.
func asCheckError(t *testing.T, err error) *gradcheck.Error {
	t.Helper()
	var e *gradcheck.Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v (%T), want a *gradcheck.Error", err, err)
	}
	return e
}
