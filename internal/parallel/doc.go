// Package parallel is the worker pool a machine lends its kernels through
// graph.Exec: a fixed set of goroutines, started once, that run the parts
// of a task without allocating per run.
package parallel
