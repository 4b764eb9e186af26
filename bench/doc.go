// Package bench measures nabla beside Gorgonia on the same work, and checks
// that both compute the same first-order gradients. It holds tests and
// benchmarks only (see README.md for the figures); Gorgonia is imported
// here and nowhere else in the module.
package bench
