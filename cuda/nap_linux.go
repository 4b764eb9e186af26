package cuda

import (
	"syscall"
	"time"
)

// nap sleeps for d in nanosleep, on the calling thread (a watched wait's,
// locked to it): time.Sleep from a thread locked to its goroutine hands
// the goroutine to the scheduler's timers, which wake it a millisecond or
// more late (1.1 ms for 20 µs here), where nanosleep overshoots by the
// kernel's timer slack (about 70 µs on a loaded 2-vCPU VM).
func nap(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	syscall.Nanosleep(&ts, nil)
}
