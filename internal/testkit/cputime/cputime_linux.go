package cputime

import (
	"syscall"
	"time"
	"unsafe"
)

// Thread is the CPU time the calling thread has used, and true; lock the
// goroutine to its thread (runtime.LockOSThread) around what it times. It
// reads CLOCK_THREAD_CPUTIME_ID, which counts to the nanosecond up to the
// moment of the call (getrusage's RUSAGE_THREAD may lag by a scheduler
// tick, a few milliseconds).
func Thread() (time.Duration, bool) {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
