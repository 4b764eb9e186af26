// Package fdtest holds the finite-difference helpers that nabla's test
// suites share: run a graph in the VM, take central differences of a scalar
// node, and check derivatives of several orders against them.
package fdtest
