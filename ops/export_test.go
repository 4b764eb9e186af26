package ops

// SoftmaxGrad exposes softmaxGrad to the tests of package ops_test.
var SoftmaxGrad = softmaxGrad
