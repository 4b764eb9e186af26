//go:build !linux

package dist

import "runtime"

// yield lets other goroutines run; elsewhere than Linux, the operating
// system's scheduler is left to share the processor.
func yield() { runtime.Gosched() }

// keepGoSignals runs f; elsewhere than Linux, signal handlers are left
// as MPI sets them.
func keepGoSignals(f func() error) error { return f() }

// onlineCPUs is the number of cpus this process may run on; elsewhere
// than Linux, the machine's are not read.
func onlineCPUs() int { return runtime.NumCPU() }

// crowded reports true: elsewhere than Linux, the machine's runnable
// threads are not read, and a waiting rank yields.
func (c *Comm) crowded() bool { return true }
