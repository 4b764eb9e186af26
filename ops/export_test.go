package ops

// SoftmaxGrad exposes softmaxGrad to the tests of package ops_test.
var SoftmaxGrad = softmaxGrad

// GELUDeriv exposes geluDeriv to the tests of package ops_test.
var GELUDeriv = geluDeriv

// UniformDense exposes uniformDense, the tests' random tensors with
// elements uniform in [lo, hi), to the tests of package ops_test.
var UniformDense = uniformDense
