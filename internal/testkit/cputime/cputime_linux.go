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

// Process is the CPU time all the process's threads have used, user and
// system, and true: a step run on one thread still spends some on the
// garbage collector's and the runtime's threads.
func Process() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
