package ops_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, all its threads: on a
// shared machine it counts the time the process ran, not the time it
// waited for a core.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
