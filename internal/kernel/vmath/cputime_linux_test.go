package vmath

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time the calling thread has used (lock the
// goroutine to its thread first): on a shared machine it counts the time
// the thread ran, not the time it waited for a core.
func threadCPU() (time.Duration, bool) {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
