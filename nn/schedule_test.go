package nn

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

func TestSchedules(t *testing.T) {
	for _, c := range []struct {
		name string
		s    Schedule
		want map[int]float64
	}{
		{"step", StepLR{Base: 0.1, Every: 3, Gamma: 0.5}, map[int]float64{0: 0.1, 2: 0.1, 3: 0.05, 7: 0.025}},
		{"linear", LinearLR{Start: 1, End: 0.1, Steps: 9}, map[int]float64{0: 1, 3: 0.7, 9: 0.1, 100: 0.1}},
		{"cosine", CosineLR{Base: 1, Min: 0.1, Warmup: 4, Total: 14}, map[int]float64{
			0: 0.25, 3: 1, 4: 1, 9: 0.1 + 0.9*(1+math.Cos(math.Pi/2))/2, 14: 0.1, 20: 0.1}},
	} {
		for step, want := range c.want {
			require.InDelta(t, want, c.s.LR(step), 1e-15, "%s at step %d", c.name, step)
		}
	}
}

// A schedule applied before every step, with clipping, changes the
// updates of the same program and allocates nothing.
func TestScheduleAndClippingAllocateNothing(t *testing.T) {
	opt := NewSGD(SGDConfig{LR: 0.1, Clip: Clipping{MaxNorm: 0.5, MaxValue: 0.5}})
	m, p := trainer(t, opt, []float64{1, -2}, func(p *graph.Node) *graph.Node { return ops.Sum(ops.Square(p)) })
	var s Schedule = CosineLR{Base: 0.1, Min: 0.01, Warmup: 2, Total: 10}
	require.NoError(t, Apply(s, opt, m, 0))
	before := value(t, m, p)
	require.NoError(t, m.Run(nil))
	after := value(t, m, p)
	// Step 0 runs at 0.05 with g = (2, -4) clipped to (0.5, -0.5), then to
	// norm 0.5: (0.5, -0.5)·0.5/(√0.5+1e-6).
	coef := 0.5 / (math.Sqrt(0.5) + 1e-6)
	assertClose(t, "step 0", after, []float64{before[0] - 0.05*0.5*coef, before[1] + 0.05*0.5*coef}, 1e-15)
	step := 1
	allocs := testing.AllocsPerRun(20, func() {
		if err := Apply(s, opt, m, step); err != nil {
			t.Fatal(err)
		}
		if err := m.Run(nil); err != nil {
			t.Fatal(err)
		}
		step++
	})
	require.Zero(t, allocs)
	require.ErrorContains(t, Apply(nil, opt, m, 0), "must not be nil")
}

// The weight decay is a buffer too: SetWeightDecay changes the step of
// the same program. p² from 1 with SGD at lr 0.1 and decay 0.1 goes to
// 1 - 0.1·(2 + 0.1) = 0.79, then with decay 0.5 to 0.79 - 0.1·2.5·0.79.
func TestSetWeightDecay(t *testing.T) {
	opt := NewSGD(SGDConfig{LR: 0.1, WeightDecay: 0.1})
	require.ErrorContains(t, opt.SetWeightDecay(nil, 1), "before Updates")
	m, p := trainer(t, opt, []float64{1}, func(p *graph.Node) *graph.Node { return ops.Sum(ops.Square(p)) })
	prog := m.Program()
	assertClose(t, "decay 0.1", steps(t, m, p, 1), []float64{0.79}, 1e-15)
	require.NoError(t, opt.SetWeightDecay(m, 0.5))
	assertClose(t, "decay 0.5", steps(t, m, p, 1), []float64{0.79 - 0.1*2.5*0.79}, 1e-15)
	require.Same(t, prog, m.Program())
	require.ErrorContains(t, opt.SetWeightDecay(m, -1), "must be finite and ≥ 0")

	plain := NewAdamW(DefaultAdam())
	m, _ = trainer(t, plain, []float64{1}, func(p *graph.Node) *graph.Node { return ops.Sum(ops.Square(p)) })
	require.ErrorContains(t, plain.SetWeightDecay(m, 0.1), "built without weight decay")
}
