package vm_test

import (
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// busyOrNil fails the test for an error other than the busy one, and
// reports whether the call succeeded.
func busyOrNil(t *testing.T, what string, err error) bool {
	t.Helper()
	if err != nil && !strings.Contains(err.Error(), "running on another goroutine") {
		t.Errorf("%s: %v", what, err)
	}
	return err == nil
}

// filled is a float64 vector of n copies of v.
func filled(n int, v float64) *tensor.Dense {
	t := graph.NewDense(graph.Float64, n)
	for i := range t.Float64s() {
		t.Float64s()[i] = v
	}
	return t
}

// sumMachine is a machine computing the sum of a parameter w of n
// elements, all ones to start with, and lr·2 of a one-element parameter
// lr, 1 to start with.
func sumMachine(t *testing.T, n int) (m *vm.Machine, w, lr, sum, lr2 *graph.Node) {
	t.Helper()
	g := graph.New()
	w = g.Param("w", filled(n, 1))
	lr = g.Param("lr", filled(1, 1))
	sum, lr2 = ops.Sum(w), ops.Scale(lr, 2)
	p, err := compile.Compile([]*graph.Node{sum, lr2})
	if err != nil {
		t.Fatal(err)
	}
	if m, err = vm.New(p, vm.WithThreads(1)); err != nil {
		t.Fatal(err)
	}
	return m, w, lr, sum, lr2
}

// hammer calls each function on a goroutine of its own, all at once,
// until each has succeeded (returned true) wins times or a second has
// passed, and reports whether each won at least once.
func hammer(t *testing.T, wins int, fs ...func(i int) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	won := make([]int, len(fs))
	var wg sync.WaitGroup
	for k, f := range fs {
		wg.Go(func() {
			for i := 0; won[k] < wins && time.Now().Before(deadline); i++ {
				if f(i) {
					won[k]++
				}
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	for k, n := range won {
		if n == 0 {
			t.Errorf("function %d never had the machine: the test tested nothing", k)
		}
	}
}

// Set, SetScalar, Get, Value and Scalar on one goroutine while Run reads
// the parameters on another: each call either has the machine to itself
// or is the busy error, so the sum of w a Run computes is n or 2n (w is
// all ones or all twos), never a mix, and lr·2 is 2 or 4.
func TestSetDuringRunNeverMixes(t *testing.T) {
	const n, wins = 1 << 14, 1000
	m, w, lr, sum, lr2 := sumMachine(t, n)
	ones, twos := filled(n, 1), filled(n, 2)
	pure := func(what string, v float64, want ...float64) {
		t.Helper()
		if !slices.Contains(want, v) {
			t.Errorf("%s = %v, want one of %v", what, v, want)
		}
	}
	hammer(t, wins,
		func(int) bool {
			if !busyOrNil(t, "Run", m.Run(nil)) {
				return false
			}
			s, err := m.Scalar(sum)
			if !busyOrNil(t, "Scalar", err) {
				return false
			}
			pure("sum(w)", s, n, 2*n)
			if v, err := m.Value(lr2); busyOrNil(t, "Value", err) {
				pure("lr·2", v.Float64s()[0], 2, 4)
			}
			return true
		},
		func(i int) bool {
			v := ones
			if i%2 == 1 {
				v = twos
			}
			busyOrNil(t, "SetScalar", m.SetScalar(lr, float64(1+i%2)))
			return busyOrNil(t, "Set", m.Set(w, v))
		},
		func(int) bool {
			v, err := m.Get(w)
			if !busyOrNil(t, "Get", err) {
				return false
			}
			s := 0.0
			for _, x := range v.Float64s() {
				s += x
			}
			pure("sum(Get(w))", s, n, 2*n)
			return true
		})
}

// setter sets w to v on the machine, reporting success.
func setter(t *testing.T, m *vm.Machine, w *graph.Node, v *tensor.Dense) func(int) bool {
	return func(int) bool { return busyOrNil(t, "Set", m.Set(w, v)) }
}

// Two goroutines setting one parameter at once leave it all ones or all
// twos.
func TestConcurrentSetsNeverMix(t *testing.T) {
	const n = 1 << 14
	m, w, _, sum, _ := sumMachine(t, n)
	hammer(t, 1000, setter(t, m, w, filled(n, 1)), setter(t, m, w, filled(n, 2)))
	if err := m.Run(nil); err != nil {
		t.Fatal(err)
	}
	if s, err := m.Scalar(sum); err != nil || s != n && s != 2*n {
		t.Errorf("sum(w) after concurrent Sets = %v, %v; want %d or %d", s, err, n, 2*n)
	}
}

// Machines sharing parameters share the guard: a Set on one while
// another runs is the busy error, not a torn read.
func TestSharingParamsMachinesAreUsedOneAtATime(t *testing.T) {
	const n = 1 << 14
	a, w, _, sum, _ := sumMachine(t, n)
	b, err := vm.New(a.Program(), vm.SharingParams(a), vm.WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	hammer(t, 100,
		func(int) bool {
			if !busyOrNil(t, "Run", b.Run(nil)) {
				return false
			}
			s, err := b.Scalar(sum)
			if busyOrNil(t, "Scalar", err) && s != n && s != 2*n {
				t.Errorf("sum(w) on the sharing machine = %v, want %d or %d", s, n, 2*n)
			}
			return err == nil
		},
		setter(t, a, w, filled(n, 1)), setter(t, a, w, filled(n, 2)))
}

// A Runner used from two goroutines at once, at two batch sizes, gives
// the busy error or the value of a whole run: the sum of the all-ones x
// is 3 per row, so 6 or 15.
func TestRunnerFromTwoGoroutines(t *testing.T) {
	g := graph.New()
	x := g.Input("x", graph.Float64, 2, 3)
	w := g.Param("w", filled(3, 1))
	y := ops.Sum(ops.Mul(x, w))
	r, err := vm.NewRunner([]*graph.Node{y}, nil, nil, vm.WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	feed := func(rows int) vm.Feeds {
		v := graph.NewDense(graph.Float64, rows, 3)
		for i := range v.Float64s() {
			v.Float64s()[i] = 1
		}
		return vm.Feeds{x: v}
	}
	run := func(rows int) func(int) bool {
		f := feed(rows)
		return func(int) bool {
			if !busyOrNil(t, "Runner.Run", r.Run(f)) {
				return false
			}
			s, err := r.Scalar(y)
			if busyOrNil(t, "Runner.Scalar", err) && s != 6 && s != 15 {
				t.Errorf("sum = %v, want 6 or 15", s)
			}
			if _, verr := r.Value(x); verr != nil {
				busyOrNil(t, "Runner.Value", verr)
			}
			_ = r.Sizes()
			return err == nil
		}
	}
	hammer(t, 50, run(2), run(5))
	if err := r.Machine().Set(w, filled(3, 2)); err != nil {
		t.Fatal(err)
	}
	if err := r.Run(feed(5)); err != nil {
		t.Fatal(err)
	}
	if s, err := r.Scalar(y); err != nil || s != 30 {
		t.Errorf("sum after setting w to twos, batch 5: %v, %v; want 30", s, err)
	}
	if r.Sizes() != 2 {
		t.Errorf("Sizes = %d, want 2", r.Sizes())
	}
}
