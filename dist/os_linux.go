package dist

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// yield gives the processor to another runnable thread of the machine,
// if any (sched_yield).
func yield() { syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }

// goSignals are the signals of faults, which Go's runtime turns into
// panics (a nil dereference) or crash reports, and which MPI's libraries
// catch to print backtraces of their own (UCX, under MPICH, does at
// MPI_Init).
var goSignals = []syscall.Signal{syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL, syscall.SIGABRT}

// sigaction is the kernel's struct sigaction, kept opaque: it is only
// read and written back whole (32 bytes on amd64 and arm64).
type sigaction [4]uintptr

// keepGoSignals runs f, then gives the fault signals back the handlers
// they had before it (Go's).
func keepGoSignals(f func() error) error {
	saved := make([]sigaction, len(goSignals))
	for i, s := range goSignals {
		syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(s), 0, uintptr(unsafe.Pointer(&saved[i])), 8, 0, 0)
	}
	r := f()
	for i, s := range goSignals {
		syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(s), uintptr(unsafe.Pointer(&saved[i])), 0, 8, 0, 0)
	}
	return r
}

// onlineCPUs is the number of cpus online on the machine (sysfs's
// cpu/online), not the ones this process may run on (a launcher binds
// each rank to its own); runtime.NumCPU where sysfs does not say.
func onlineCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if n := cpuListSize(string(b)); err == nil && n > 0 {
		return n
	}
	return runtime.NumCPU()
}

// crowded reports whether more threads are runnable on the machine than
// it has cpus, as /proc/loadavg says at this moment; true where it does
// not say. It allocates nothing: the file stays open, read again from its
// start into the Comm's buffer.
func (c *Comm) crowded() bool {
	if c.load == nil {
		f, err := os.Open("/proc/loadavg")
		if err != nil {
			return true
		}
		c.load = f
	}
	n, _ := c.load.ReadAt(c.loadBuf[:], 0)
	if n <= 0 {
		return true
	}
	k, ok := runnableOf(unsafe.String(&c.loadBuf[0], n))
	return !ok || k > c.cpus
}
