package ops

// SoftmaxGrad exposes softmaxGrad to the tests of package ops_test.
var SoftmaxGrad = softmaxGrad

// GELUDeriv exposes geluDeriv to the tests of package ops_test.
var GELUDeriv = geluDeriv
