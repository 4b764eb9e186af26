package gemm

import "syscall"

// threadCPU returns the CPU time the calling OS thread has used, in
// nanoseconds, or -1 where it cannot tell.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
