package cuda

import (
	"errors"
	"time"

	"github.com/nabla-go/nabla/graph"
)

// Watched waits. A library call's work may never end: an NCCL collective
// whose peer died waits on the GPU for ever, and cuStreamSynchronize with
// it. Where a library call gives a Watch (graph.LibraryCall), the
// backend's waits for queued work holding the call (downloads, syncs, the
// waits of uploads and frees) poll instead: the stream's state (on a GPU,
// cuStreamQuery; the host stand-in's is always done), then every watch of
// the work queued, until the stream is done and no watch says its work is
// in progress. A watch's error means the library has ended the call's
// work: the backend then waits for the stream, which drains, and the wait
// fails with the error, named after the op's instruction, which also
// fails the executable's later runs. Waits for work without a watched
// call block in cuStreamSynchronize, as before.
//
// A wait polls without pause for watchSpin, as CUDA's own synchronisation
// spins by default (a step whose collective its peers join at once is
// done within it, and returns at once); then it naps between polls
// (nanosleep: nap) for a sixteenth of the time waited so far, from
// watchNapMin to watchNapMax, so that a long wait (a peer writing a
// checkpoint) does not hold a core. A wait past watchSpin so returns at
// most 1/16 of its length (and a millisecond at most), plus the kernel's
// timer slack, after its work is done.
const (
	watchSpin   = 500 * time.Microsecond
	watchNapMin = 20 * time.Microsecond
	watchNapMax = time.Millisecond
)

// watch is a watched library step of an executable's plan.
type watch struct {
	fn     func(waited time.Duration) error // the call's Watch
	e      *executable
	step   int  // in e's plan
	queued bool // in its backend's watcher
}

// fail makes err the step's error, named after its instruction, and the
// executable's for its later runs.
func (w *watch) fail(err error) error {
	err = w.e.stepError(w.e.plan.steps[w.step], err)
	if w.e.broken == nil {
		w.e.broken = err
	}
	return err
}

// watcher is a backend's watched library calls queued since its last
// wait.
type watcher struct{ watching []*watch }

// watch adds w to the calls the next wait watches.
func (ws *watcher) watch(w *watch) {
	if !w.queued {
		w.queued = true
		ws.watching = append(ws.watching, w)
	}
}

// streamQuery is a backend's stream, polled by a watched wait.
type streamQuery interface {
	// queryStream says whether the work queued is done.
	queryStream() (bool, error)
}

// waitWatched waits for the work queued, watched (see above), and then
// forgets the calls watched. It returns the watch that failed, with its
// error, or the stream's error.
func (ws *watcher) waitWatched(s streamQuery) (*watch, error) {
	defer func() {
		for _, w := range ws.watching {
			w.queued = false
		}
		clear(ws.watching)
		ws.watching = ws.watching[:0]
	}()
	start := time.Now()
	for {
		done, err := s.queryStream()
		if err != nil {
			return nil, err
		}
		waited := time.Since(start)
		busy := false
		for _, w := range ws.watching {
			switch err := w.fn(waited); {
			case err == nil:
			case errors.Is(err, graph.ErrInProgress):
				busy = true
			default:
				return w, err
			}
		}
		if done && !busy {
			return nil, nil
		}
		if waited >= watchSpin {
			nap(min(max(waited/16, watchNapMin), watchNapMax))
		}
	}
}

// bindWatches makes the watches of the plan's watched library steps.
func (e *executable) bindWatches() {
	e.watches = make([]*watch, len(e.plan.steps))
	for i, s := range e.plan.steps {
		if s.kind != stepLibrary || e.plan.calls[s.lib].Watch == nil {
			continue
		}
		e.watches[i] = &watch{fn: e.plan.calls[s.lib].Watch, e: e, step: i}
		e.watched = append(e.watched, e.watches[i])
	}
}
