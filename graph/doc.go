// Package graph is nabla's intermediate representation: a static expression
// graph of typed nodes, built ahead of time and run later by the vm package.
//
// A Graph owns an append-only list of nodes. A node's inputs always exist
// before it, so creation order is a topological order; differentiation (in
// package compile) simply appends more nodes.
//
// Leaves are inputs (fed at each run), parameters (values that live in the
// machine across runs) and constants. Every other node applies an Op to
// earlier nodes: built-in ops live in package ops, and a user's custom op
// enters a graph the same way, through Apply.
//
// Shapes and dtypes are checked when a node is built. Errors are sticky: a
// node built from bad inputs records the first error on its graph (naming the
// op, the types involved and the caller's file:line) and returns a poisoned
// node; every later step that touches a poisoned node short-circuits, and
// Graph.Err, the compiler and the VM all report that first error. No function
// in this package panics on a user's mistake.
package graph
