// Package cputime measures the CPU time of the calling thread, for
// benchmarks on shared machines: wall-clock time there counts the time a
// thread waited for a core behind other work, CPU time only the time it
// ran.
package cputime
