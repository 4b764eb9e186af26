// Package vm runs compiled programs: a Machine allocates every buffer a
// Program needs once, keeps parameters between runs, and executes the
// program's instructions in order on each Run without allocating.
package vm
