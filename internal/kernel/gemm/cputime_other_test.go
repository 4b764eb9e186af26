//go:build !linux

package gemm

// threadCPU returns -1: the thread's CPU time is read on Linux only.
func threadCPU() int64 { return -1 }
