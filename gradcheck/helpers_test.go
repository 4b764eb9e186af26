package gradcheck_test

import (
	"errors"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/gradcheck"
	"github.com/nabla-go/nabla/internal/testkit/optable"
)

// tensorOf builds a float64 tensor (optable.TensorOf).
func tensorOf(shape []int, vals ...float64) *tensor.Dense { return optable.TensorOf(shape, vals...) }

// intsOf returns an integer tensor of the given dtype (optable.IntsOf).
func intsOf(dtype tensor.Dtype, shape []int, vals ...int64) *tensor.Dense {
	return optable.IntsOf(dtype, shape, vals...)
}

// values draws sample inputs from a seeded source (optable.Values).
type values = optable.Values

func newValues(seed uint64) values { return optable.NewValues(seed) }

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
