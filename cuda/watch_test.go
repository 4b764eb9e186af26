package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/vm"
)

// fakeLib is the fake driver's library call and its hooks (see
// fakecuda.c).
type fakeLib struct {
	call    func(out, in uint64, n int64) int32
	hang    func(on int32)
	abort   func()
	queries func() int64
}

// newFakeDevice is a device on the fake GPU, and the fake's library.
func newFakeDevice(t *testing.T) (*Device, *fakeLib) {
	t.Helper()
	b, h, _ := openFakeGPU(t)
	f := &fakeLib{}
	if missing := bind(h, []symbol{{"fake_library", &f.call}, {"fake_hang", &f.hang}, {"fake_abort", &f.abort}, {"fake_queries", &f.queries}}); len(missing) > 0 {
		t.Fatal(missing)
	}
	t.Cleanup(func() { f.hang(0) })
	return &Device{be: b, name: b.String()}, f
}

// watchedOp is an op that the fake GPU runs as the fake's library call
// (out = 2·in, float64), watched unless unwatched: its watch gives the
// call up (fake_abort) once it has waited giveUpAfter.
type watchedOp struct {
	f           *fakeLib
	unwatched   bool
	giveUpAfter time.Duration
	calls       *int // of the watch
}

func (watchedOp) Name() string { return "Watched" }

func (watchedOp) Type(in []graph.Type) (graph.Type, error) { return in[0], nil }

func (watchedOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return errors.New("on the host")
}

func (o watchedOp) Library(dev graph.LibraryDevice, in, _ []graph.Type) (*graph.LibraryCall, error) {
	n := int64(in[0].Size())
	c := &graph.LibraryCall{Label: "fake library", Call: func(in, out []uintptr, _ uintptr) error {
		if r := o.f.call(uint64(out[0]), uint64(in[0]), n); r != 0 {
			return fmt.Errorf("fake_library: %d", r)
		}
		return nil
	}}
	if !o.unwatched {
		c.Watch = func(waited time.Duration) error {
			*o.calls++
			if waited > o.giveUpAfter {
				o.f.abort()
				return fmt.Errorf("the library gave up after %v", o.giveUpAfter)
			}
			return nil
		}
	}
	return c, nil
}

// watchedMachine is a machine on dev running op on an input of 3.
func watchedMachine(t *testing.T, dev *Device, op graph.Op) (*vm.Machine, *graph.Node, *graph.Node) {
	t.Helper()
	return deviceMachineOf(t, dev, func(x *graph.Node) *graph.Node { return graph.Apply(op, x) })
}

// deviceMachineOf loads on dev the program computing y = f(x) of a
// float64 input x of 3 elements; the machine closes with the test.
func deviceMachineOf(t *testing.T, dev *Device, f func(x *graph.Node) *graph.Node) (m *vm.Machine, x, y *graph.Node) {
	t.Helper()
	g := graph.New()
	x = g.Input("x", graph.Float64, 3)
	y = f(x)
	p, err := compile.Compile([]*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	if m, err = vm.New(p, vm.OnDevice(dev)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, x, y
}

// TestFakeLibraryWatch: on the fake GPU, a machine whose library step is
// watched polls the stream (cuStreamQuery) and gives the right values, on
// its first run and on the replays of its CUDA graph; where the library's
// work never ends, the read after the run fails with the watch's error,
// named after the op, once the watch gives the call up (not hanging in
// cuStreamSynchronize, which the fake fails instead), and the machine's
// later runs fail with the same error. A machine without a watched step
// never queries the stream.
func TestFakeLibraryWatch(t *testing.T) {
	dev, f := newFakeDevice(t)
	in := tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, -2, 0.5}))
	var calls int
	m, x, y := watchedMachine(t, dev, watchedOp{f: f, giveUpAfter: 50 * time.Millisecond, calls: &calls})
	for run := range 3 {
		before := f.queries()
		if err := m.Run(vm.Feeds{x: in}); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		v, err := m.Value(y)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if got := fmt.Sprint(v.Float64s()); got != "[2 -4 1]" {
			t.Errorf("run %d: %s, want [2 -4 1]", run, got)
		}
		if f.queries() == before {
			t.Errorf("run %d: the wait did not query the stream", run)
		}
	}
	if err := Replaying(m); err != nil {
		t.Errorf("no replay: %v", err)
	}
	if calls < 3 {
		t.Errorf("the watch was called %d times in 3 runs", calls)
	}

	f.hang(1)
	if err := m.Run(vm.Feeds{x: in}); err != nil {
		t.Fatal(err) // queued: nothing waits yet
	}
	start := time.Now()
	_, err := m.Value(y)
	took := time.Since(start)
	want := "Watched (node Watched #1 float64(3)): the library gave up after 50ms"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("the read of a hung call: %v, want an error containing %q", err, want)
	}
	if took < 50*time.Millisecond || took > time.Second {
		t.Errorf("the read failed after %v, want 50ms and a little", took)
	}
	f.hang(0)
	if err := m.Run(vm.Feeds{x: in}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a run after the failure: %v, want %q", err, want)
	}

	plain, px, py := watchedMachine(t, dev, watchedOp{f: f, unwatched: true})
	before := f.queries()
	for range 2 {
		if err := plain.Run(vm.Feeds{px: in}); err != nil {
			t.Fatal(err)
		}
		if _, err := plain.Value(py); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.queries() - before; n != 0 {
		t.Errorf("a machine without a watched step queried the stream %d times", n)
	}
}

// TestLibraryWatchOnHost: on the host stand-in, a watch that says its
// call is in progress holds the read until it no longer does; a watch's
// error fails the read, named after the op, and the machine's later runs.
func TestLibraryWatchOnHost(t *testing.T) {
	dev, err := OpenHost()
	if err != nil {
		t.Skip(err)
	}
	defer dev.Close()
	in := tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, -2, 0.5}))
	for _, c := range []struct {
		mode string
		err  string
	}{{"in progress", ""}, {"fails", "Twice (node Twice #1 float64(3)): the library gave up"}} {
		var calls int
		op := watchOnHost{libOp{h: dev.be.(*hostBackend)}, c.mode, &calls}
		m, x, y := watchedMachine(t, dev, op)
		if err := m.Run(vm.Feeds{x: in}); err != nil {
			t.Fatal(err)
		}
		v, err := m.Value(y)
		if c.err == "" {
			if err != nil {
				t.Fatalf("%s: %v", c.mode, err)
			}
			if got := fmt.Sprint(v.Float64s()); got != "[2 -4 1]" || calls != 4 {
				t.Errorf("%s: %s after %d calls of the watch, want [2 -4 1] after 4", c.mode, got, calls)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Fatalf("%s: %v, want %q", c.mode, err, c.err)
		}
		if err := m.Run(vm.Feeds{x: in}); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: a run after the failure: %v, want %q", c.mode, err, c.err)
		}
	}
}

// watchOnHost is libOp's call on the host stand-in with a watch: "in
// progress" for its first 3 calls, then done; or "fails".
type watchOnHost struct {
	libOp
	mode  string
	calls *int
}

func (o watchOnHost) Library(dev graph.LibraryDevice, in, out []graph.Type) (*graph.LibraryCall, error) {
	c, err := o.libOp.Library(dev, in, out)
	if c != nil {
		c.Watch = func(time.Duration) error {
			*o.calls++
			switch {
			case o.mode == "fails":
				return errors.New("the library gave up")
			case *o.calls <= 3:
				return graph.ErrInProgress
			}
			return nil
		}
	}
	return c, err
}

// BenchmarkFakeWait times a wait on the fake GPU for work already done,
// blocking (cuStreamSynchronize) and watched (cuStreamQuery and a watch),
// and a watched wait for work that its library holds for 2 ms: what it
// takes past 2 ms (late-µs, the median) is the latency the polling adds
// to a step that long.
func BenchmarkFakeWait(bm *testing.B) {
	b, h, _ := openFakeGPU(bm)
	f := &fakeLib{}
	if missing := bind(h, []symbol{{"fake_library", &f.call}, {"fake_hang", &f.hang}, {"fake_abort", &f.abort}, {"fake_queries", &f.queries}}); len(missing) > 0 {
		bm.Fatal(missing)
	}
	buf, err := b.alloc(64)
	if err != nil {
		bm.Fatal(err)
	}
	queue := func() {
		if err := b.enter(); err != nil {
			bm.Fatal(err)
		}
		defer runtime.UnlockOSThread()
		if r := f.call(uint64(buf), uint64(buf), 8); r != 0 {
			bm.Fatal(r)
		}
	}
	done := &watch{fn: func(time.Duration) error { return nil }}
	held := &watch{fn: func(waited time.Duration) error {
		if waited >= 2*time.Millisecond {
			f.abort()
		}
		return nil
	}}
	for _, c := range []struct {
		name  string
		hang  int32
		watch *watch
	}{{"blocking", 0, nil}, {"watched", 0, done}, {"watched 2ms", 1, held}} {
		bm.Run(c.name, func(bm *testing.B) {
			f.hang(c.hang)
			defer f.hang(0)
			var late []time.Duration
			for bm.Loop() {
				queue()
				if c.watch != nil {
					b.watch(c.watch)
				}
				start := time.Now()
				if err := b.sync(); err != nil {
					bm.Fatal(err)
				}
				late = append(late, time.Since(start)-2*time.Millisecond)
			}
			if c.hang != 0 {
				slices.Sort(late)
				bm.ReportMetric(float64(late[len(late)/2].Microseconds()), "late-µs")
			}
		})
	}
}
