package onnx

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// Losses: what PyTorch's exporter writes for NLLLoss and CrossEntropyLoss.
func init() {
	register(map[string]importFunc{
		"NegativeLogLikelihoodLoss": one(func(c *nodeContext) (*graph.Node, error) {
			in, err := c.inputs(2)
			if err != nil {
				return nil, err
			}
			return nllLoss(c, in[0], in[1])
		}),
		"SoftmaxCrossEntropyLoss": func(c *nodeContext) ([]*graph.Node, error) {
			in, err := c.inputs(2)
			if err != nil {
				return nil, err
			}
			logProb := ops.LogSoftmax(in[0], 1)
			loss, err := nllLoss(c, logProb, in[1])
			return []*graph.Node{loss, logProb}, err
		},
	})
	loss := attrs{"ignore_index": {}, "reduction": onlyStrings("mean", "none", "sum")}
	accept(map[string]attrs{"NegativeLogLikelihoodLoss": loss, "SoftmaxCrossEntropyLoss": loss})
}

// nllLoss is -x[n, t[n, d...], d...] weighted by weight[t] (input 2, when
// given), zero where t is ignore_index, reduced by "none", "sum" or "mean"
// (the sum over the sum of the weights that count). The class is picked
// with a one-hot mask, so that the loss differentiates with respect to x.
func nllLoss(c *nodeContext, x, target *graph.Node) (*graph.Node, error) {
	if err := checkIndices("target classes", target); err != nil {
		return nil, err
	}
	r := x.Type().Rank()
	if r < 2 || target.Type().Rank() != r-1 {
		return nil, fmt.Errorf("input %v and target %v: want (N,C,d...) and (N,d...)", x.Type(), target.Type())
	}
	classes := x.Shape()[1]
	t := ops.Cast(target, graph.Float64)
	var keep *graph.Node // 1 where the target counts
	if c.has("ignore_index") {
		ignored := ops.Equal(t, scalar(t, float64(c.attrInt("ignore_index", 0))))
		keep = ops.Cast(ops.Sub(scalar(t, 1), ignored), x.DType())
		t = ops.Where(ignored, scalar(t, 0), t) // a class index, masked out below
	}
	onehot := ops.OneHot(ops.Cast(t, graph.Int64), classes, x.DType()) // (N, d..., C)
	perm := []int{0, r - 1}
	for i := 1; i < r-1; i++ {
		perm = append(perm, i)
	}
	mask := ops.Transpose(onehot, perm...) // (N, C, d...)
	loss := ops.Neg(ops.Sum(ops.Mul(x, mask), 1))
	weight := keep
	if w := c.optional(2); w != nil {
		picked := ops.Sum(ops.Mul(mask, channelVector(w, r)), 1)
		if keep != nil {
			picked = ops.Mul(picked, keep)
		}
		weight = picked
	}
	if weight != nil {
		loss = ops.Mul(loss, weight)
	}
	switch red := c.attrString("reduction", "mean"); red {
	case "none":
		return loss, nil
	case "sum":
		return ops.Sum(loss), nil
	case "mean":
		if weight == nil {
			return ops.Mean(loss), nil
		}
		return ops.Div(ops.Sum(loss), ops.Sum(weight)), nil
	default:
		return nil, unsupported("reduction %q", red)
	}
}
