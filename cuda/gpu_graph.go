package cuda

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// graphsEnv, set to 0, makes record return run itself instead of a CUDA
// graph's replay.
const graphsEnv = "NABLA_CUDA_GRAPHS"

// record captures run into a CUDA graph and returns a replay that
// launches the graph on the stream: the captured work is not done until
// replay is called (see backend).
//
// The caller has run the same work once, outside any capture (a machine
// runs its first run step by step), which did what must not happen inside
// a capture: cuBLAS's and the driver's first-use set-up. The capture is
// in relaxed mode
// (CU_STREAM_CAPTURE_MODE_RELAXED): the other modes forbid this thread
// calls the driver deems unsafe during a capture, which cuBLAS or a lazily
// loaded kernel may make, and would fail the capture for them; the methods
// that must not be captured refuse themselves (errCapturing). The
// goroutine stays on one thread throughout, as the driver requires of the
// other modes and as the context's being current does.
//
// If the capture fails (run returns an error while capturing, the driver
// refuses a call or the graph, or $NABLA_CUDA_GRAPHS is 0), the returned
// replay is run itself, which queues the same work, only slower; why is
// kept in captureErr. What a failed capture queued is not done.
func (b *gpuBackend) record(run func() error) (func() error, error) {
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer runtime.UnlockOSThread()
	if b.capturing {
		return nil, errors.New("cuda: record inside record")
	}
	replay, err := b.capture(run)
	b.captureErr = err
	if err != nil {
		return run, nil
	}
	return replay, nil
}

// capture captures run into a graph and instantiates it.
func (b *gpuBackend) capture(run func() error) (func() error, error) {
	if os.Getenv(graphsEnv) == "0" {
		return nil, fmt.Errorf("cuda: CUDA graphs are off (%s=0)", graphsEnv)
	}
	d := b.d
	if err := d.check("cuStreamBeginCapture_v2", "relaxed", d.cuStreamBeginCapture(b.stream, cuStreamCaptureModeRelaxed)); err != nil {
		return nil, err
	}
	b.capturing = true
	runErr := run()
	b.capturing = false
	var graph uintptr
	endErr := d.check("cuStreamEndCapture", "", d.cuStreamEndCapture(b.stream, &graph))
	if runErr != nil || endErr != nil || graph == 0 {
		if graph != 0 {
			d.cuGraphDestroy(graph)
		}
		switch {
		case runErr != nil:
			return nil, fmt.Errorf("cuda: capturing a CUDA graph: %w", runErr)
		case endErr != nil:
			return nil, endErr
		}
		return nil, errors.New("cuda: cuStreamEndCapture returned no graph")
	}
	var exec uintptr
	err := d.check("cuGraphInstantiateWithFlags", "", d.cuGraphInstantiateWithFlags(&exec, graph, 0))
	d.cuGraphDestroy(graph) // the instantiated graph does not need it
	if err != nil {
		return nil, err
	}
	b.graphs = append(b.graphs, exec)
	return func() error {
		if err := b.enter(); err != nil {
			return err
		}
		defer runtime.UnlockOSThread()
		return d.check("cuGraphLaunch", "", b.calls.call(d.cuGraphLaunch, exec, b.stream))
	}, nil
}
