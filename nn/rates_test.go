package nn

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// storeOnly hides every method of a store but Get and Set: SetLR then
// takes the path of stores other than a machine.
type storeOnly struct{ ParamStore }

// Two machines of one program, each given its own learning rate by SetLR
// on a goroutine of its own, each step at their own rate: p² from 1 goes
// to 1 - 2·lr. One optimiser serves both; nothing of the rate is shared.
func TestSetLRPerMachineOnTheirGoroutines(t *testing.T) {
	opt := NewSGD(SGDConfig{LR: 0.1})
	m, p := trainer(t, opt, []float64{1}, func(p *graph.Node) *graph.Node { return ops.Sum(ops.Square(p)) })
	other, err := vm.New(m.Program())
	require.NoError(t, err)
	one := dense(t, []float64{1}, 1)
	for _, wrap := range []func(*vm.Machine) ParamStore{
		func(m *vm.Machine) ParamStore { return m },
		func(m *vm.Machine) ParamStore { return storeOnly{m} },
	} {
		var wg sync.WaitGroup
		for k, mk := range []*vm.Machine{m, other} {
			store, lr := wrap(mk), []float64{0.125, 0.375}[k]
			wg.Go(func() {
				for i := range 3000 {
					if err := opt.SetLR(store, lr); err != nil {
						t.Error(err)
						return
					}
					if err := mk.Run(nil); err != nil {
						t.Error(err)
						return
					}
					v, err := mk.Get(p)
					if err != nil || graph.Float(v, 0) != 1-2*lr {
						t.Errorf("%T %d, step %d at lr %v: p = %v, %v; want %v", store, k, i, lr, v, err, 1-2*lr)
						return
					}
					if err := mk.Set(p, one); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
}
