// Package race reports whether the race detector is built in, for tests
// that count allocations: under it, sync.Pool drops values at random, so
// code that allocates nothing in a normal build allocates now and then.
package race
