package nn_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/vm"
)

// labelTrainer trains a small classifier (an embedding of token indices,
// then a linear layer) with cross-entropy against labels of one dtype.
type labelTrainer struct {
	m              *vm.Machine
	tokens, labels *graph.Node
	loss, grad     *graph.Node
	model          *nn.Sequential
}

func newLabelTrainer(t *testing.T, dtype, labelDType tensor.Dtype) *labelTrainer {
	t.Helper()
	g := graph.New()
	r := rand.New(rand.NewPCG(3, 5))
	emb := nn.NewEmbedding(g, "emb", 6, 4, nn.WithRand(r), nn.WithDType(dtype))
	fc := nn.NewLinear(g, "fc", 4, 3, true, nn.WithRand(r), nn.WithDType(dtype))
	tr := &labelTrainer{model: nn.NewSequential("model", emb, fc)}
	tr.tokens = g.Input("tokens", graph.Int64, 8)
	tr.labels = g.Input("labels", labelDType, 8)
	tr.loss = nn.CrossEntropy(tr.model.Forward(tr.tokens), tr.labels)
	grads, err := compile.Grad(tr.loss, fc.Weight)
	require.NoError(t, err)
	tr.grad = grads[0]
	updates, err := nn.TrainingUpdates(nn.NewSGD(nn.SGDConfig{LR: 0.5, Momentum: 0.9}), tr.loss, tr.model)
	require.NoError(t, err)
	p, err := compile.Compile([]*graph.Node{tr.loss, tr.grad}, compile.WithUpdates(updates))
	require.NoError(t, err)
	tr.m, err = vm.New(p)
	require.NoError(t, err)
	return tr
}

func (tr *labelTrainer) step(t *testing.T, tokens, labels []int64) (loss float64, grad []float64) {
	t.Helper()
	tok, err := graph.FromInt64s(graph.Int64, tokens, len(tokens))
	require.NoError(t, err)
	lab, err := graph.FromInt64s(tr.labels.DType(), labels, len(labels))
	require.NoError(t, err)
	require.NoError(t, tr.m.Run(vm.Feeds{tr.tokens: tok, tr.labels: lab}))
	l, err := tr.m.Scalar(tr.loss)
	require.NoError(t, err)
	gv, err := tr.m.Value(tr.grad)
	require.NoError(t, err)
	return l, graph.Float64s(gv)
}

// TestTrainingWithIntegerLabels trains the same model from the same
// initial values with int64, int32 and float labels: the losses and
// gradients must be the same bits at every step, and the loss must fall.
func TestTrainingWithIntegerLabels(t *testing.T) {
	tokens := []int64{0, 1, 2, 3, 4, 5, 1, 3}
	labels := []int64{0, 1, 2, 0, 1, 2, 1, 0} // token t's class is t mod 3
	for _, dtype := range []tensor.Dtype{graph.Float64, graph.Float32} {
		ref := newLabelTrainer(t, dtype, dtype)
		others := []*labelTrainer{newLabelTrainer(t, dtype, graph.Int64), newLabelTrainer(t, dtype, graph.Int32)}
		var first, last float64
		for step := range 40 {
			wantLoss, wantGrad := ref.step(t, tokens, labels)
			for _, o := range others {
				loss, grad := o.step(t, tokens, labels)
				require.Equal(t, math.Float64bits(wantLoss), math.Float64bits(loss),
					"case %v labels %v step %d: loss %v, want %v", dtype, o.labels.DType(), step, loss, wantLoss)
				require.Equal(t, wantGrad, grad, "case %v labels %v step %d: gradient", dtype, o.labels.DType(), step)
			}
			if step == 0 {
				first = wantLoss
			}
			last = wantLoss
		}
		require.Less(t, last, first/10, "case %v: the loss must fall (from %v to %v)", dtype, first, last)
	}
}

// TestCrossEntropyIntegerLabelsByHand checks the loss and its gradient
// for int64 labels against a softmax worked with the math package.
func TestCrossEntropyIntegerLabelsByHand(t *testing.T) {
	g := graph.New()
	logitVals := []float64{0.5, -1, 2, 0.25, 3, -2}
	logits := g.Param("logits", mustDense(t, graph.Float64, logitVals, 2, 3))
	labels := g.Input("labels", graph.Int64, 2)
	loss := nn.CrossEntropy(logits, labels)
	grads, err := compile.Grad(loss, logits)
	require.NoError(t, err)
	p, err := compile.Compile([]*graph.Node{loss, grads[0]})
	require.NoError(t, err)
	m, err := vm.New(p)
	require.NoError(t, err)
	lab, _ := graph.FromInt64s(graph.Int64, []int64{2, 0}, 2)
	require.NoError(t, m.Run(vm.Feeds{labels: lab}))
	want, wantGrad := 0.0, make([]float64, 6)
	for i, c := range []int{2, 0} {
		row := logitVals[3*i : 3*i+3]
		s := 0.0
		for _, v := range row {
			s += math.Exp(v)
		}
		want += (math.Log(s) - row[c]) / 2
		for j, v := range row {
			wantGrad[3*i+j] = math.Exp(v) / s / 2
		}
		wantGrad[3*i+c] -= 0.5
	}
	got, err := m.Scalar(loss)
	require.NoError(t, err)
	require.InDelta(t, want, got, 1e-15)
	gv, err := m.Value(grads[0])
	require.NoError(t, err)
	require.InDeltaSlice(t, wantGrad, gv.Float64s(), 1e-15)
}

func mustDense(t *testing.T, dtype tensor.Dtype, vals []float64, shape ...int) *tensor.Dense {
	t.Helper()
	d, err := graph.FromFloat64s(dtype, vals, shape...)
	require.NoError(t, err)
	return d
}
