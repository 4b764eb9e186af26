// Package testnet builds the small networks nabla's tests and benchmarks
// train: a two-layer perceptron with its gradients and an SGD step, over
// seeded random data.
package testnet
