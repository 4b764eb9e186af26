// Package parallel is the worker pool that machines lend their kernels: a
// fixed set of goroutines, started once, that run the parts of a task
// without allocating per run, and the Exec through which kernels use it.
// It knows nothing of the IR: the graph package builds its Exec on this
// one.
package parallel
