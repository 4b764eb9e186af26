package parallel

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countTask records how often each part ran.
type countTask struct{ hits []atomic.Int32 }

func (t *countTask) Do(part int) { t.hits[part].Add(1) }

func TestRunDoesEveryPartOnce(t *testing.T) {
	for _, threads := range []int{0, 1, 2, 3, 8} {
		p := New(threads)
		for _, parts := range []int{0, 1, 2, 7, 100} {
			task := &countTask{hits: make([]atomic.Int32, parts)}
			p.Run(parts, task)
			for i := range task.hits {
				if got := task.hits[i].Load(); got != 1 {
					t.Errorf("threads %d, parts %d: part %d ran %d times, want 1", threads, parts, i, got)
				}
			}
		}
		p.Close()
	}
}

type panicTask struct{}

func (panicTask) Do(part int) {
	if part == 3 {
		panic("boom")
	}
}

func TestRunRepanicsOnTheCaller(t *testing.T) {
	p := New(2)
	defer p.Close()
	for range 3 { // the pool stays usable after a panic
		func() {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, "part 3: boom") {
					t.Errorf("recovered %v, want the panic of part 3", r)
				}
			}()
			p.Run(10, panicTask{})
		}()
		task := &countTask{hits: make([]atomic.Int32, 5)}
		p.Run(5, task)
		if task.hits[4].Load() != 1 {
			t.Errorf("after a panic: part 4 ran %d times", task.hits[4].Load())
		}
	}
}

func TestRunDoesNotAllocate(t *testing.T) {
	p := New(2)
	defer p.Close()
	task := &countTask{hits: make([]atomic.Int32, 16)}
	var w Workers = p
	if n := testing.AllocsPerRun(100, func() { w.Run(16, task) }); n != 0 {
		t.Errorf("Run allocates %v times, want 0", n)
	}
}

func TestExecUsesThePool(t *testing.T) {
	p := New(2)
	defer p.Close()
	e := NewExec(p)
	if e.Threads() != 2 {
		t.Errorf("Threads = %d, want 2", e.Threads())
	}
	task := &countTask{hits: make([]atomic.Int32, 9)}
	e.Parallel(9, task)
	for i := range task.hits {
		if task.hits[i].Load() != 1 {
			t.Errorf("part %d ran %d times", i, task.hits[i].Load())
		}
	}
	var nilExec *Exec
	if nilExec.Threads() != 1 {
		t.Errorf("nil Exec: Threads = %d, want 1", nilExec.Threads())
	}
	nilExec.Parallel(9, task)
	if task.hits[8].Load() != 2 {
		t.Errorf("nil Exec did not run the parts serially")
	}
	type key struct{}
	made := 0
	mk := func() any { made++; return &made }
	if e.State(key{}, mk) != e.State(key{}, mk) || made != 1 {
		t.Errorf("State made its value %d times, want once", made)
	}
}

type sumTask struct {
	x   []float64
	out []float64
}

func (s *sumTask) Do(part int) {
	for _, v := range s.x[part*64 : (part+1)*64] {
		s.out[part] += v
	}
}

func BenchmarkRun(b *testing.B) {
	p := New(2)
	defer p.Close()
	task := &sumTask{x: make([]float64, 64*8), out: make([]float64, 8)}
	for b.Loop() {
		p.Run(8, task)
	}
}

// Runs that follow one another at once, and after a pause in which the
// workers block, with every count of helpers, still do every part once.
func TestRunAfterRunsAndPauses(t *testing.T) {
	p := New(3)
	defer p.Close()
	for i := range 3000 {
		parts := []int{1, 2, 5, 1, 3, 2}[i%6]
		if i%500 == 3 {
			time.Sleep(200 * time.Microsecond) // the workers block
		}
		task := &countTask{hits: make([]atomic.Int32, parts)}
		p.Run(parts, task)
		for j := range task.hits {
			if got := task.hits[j].Load(); got != 1 {
				t.Fatalf("run %d of %d parts: part %d ran %d times, want 1", i, parts, j, got)
			}
		}
	}
}

// Close ends the workers, just after a Run or long after.
func TestCloseStopsWorkers(t *testing.T) {
	for _, pause := range []time.Duration{0, 200 * time.Microsecond} {
		before := runtime.NumGoroutine()
		p := New(4)
		p.Run(4, &countTask{hits: make([]atomic.Int32, 4)})
		time.Sleep(pause)
		p.Close()
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			t.Errorf("pause %v: %d goroutines after Close, %d before New", pause, n, before)
		}
	}
}

// BenchmarkRunAfterIdle times a Run of two tiny parts that follows a
// stretch of the caller's own work (gap) in which the worker waits: it
// is the wake-up's cost, which a step's parallel products pay after each
// serial op (run-ns, the Run alone). On a 2-vCPU virtual machine under
// load: about 1 µs at gap 0, 3–9 µs at 20 µs, 10–50 µs at 100 µs.
func BenchmarkRunAfterIdle(b *testing.B) {
	for _, gap := range []time.Duration{0, 20 * time.Microsecond, 100 * time.Microsecond} {
		b.Run(fmt.Sprint("gap=", gap), func(b *testing.B) {
			p := New(2)
			defer p.Close()
			task := &sumTask{x: make([]float64, 64*2), out: make([]float64, 2)}
			var inRun time.Duration
			for b.Loop() {
				for t0 := time.Now(); time.Since(t0) < gap; {
				}
				t1 := time.Now()
				p.Run(2, task)
				inRun += time.Since(t1)
			}
			b.ReportMetric(float64(inRun.Nanoseconds())/float64(b.N), "run-ns")
		})
	}
}
