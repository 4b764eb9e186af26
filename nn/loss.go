package nn

import (
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// MSE returns the mean squared error between pred and target, which must
// have the same shape (or broadcast): mean((pred - target)²).
func MSE(pred, target *graph.Node) *graph.Node {
	return checked("MSE", []string{"pred", "target"}, func(in []*graph.Node) *graph.Node {
		return ops.Mean(ops.Square(ops.Sub(in[0], in[1])))
	}, pred, target)
}

// CrossEntropy returns the mean softmax cross-entropy of logits (N, C)
// against labels (N) holding class indices (int32 or int64, or float values
// of the logits' dtype): the mean over
// the batch of ops.CrossEntropy's per-example losses.
func CrossEntropy(logits, labels *graph.Node) *graph.Node {
	return checked("CrossEntropy", []string{"logits", "labels"}, func(in []*graph.Node) *graph.Node {
		return ops.Mean(ops.CrossEntropy(in[0], in[1]))
	}, logits, labels)
}

// BCEWithLogits returns the mean binary cross-entropy of targets y in
// [0, 1] against probabilities sigmoid(x), from the logits x of the same
// shape: BCEWithLogitsLoss with its defaults.
func BCEWithLogits(logits, targets *graph.Node) *graph.Node {
	return BCEWithLogitsLoss(logits, targets)
}
