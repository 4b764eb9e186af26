// Package data loads the data sets that nabla's examples train on (the UCI
// handwritten digits shipped with the examples, and Fashion-MNIST when
// Debian's dataset-fashion-mnist package is installed) and reports training
// progress.
//
// A Dataset holds its rows in memory as float64 features and integer
// classes; Batch copies a batch into buffers the caller owns, so a training
// loop allocates nothing per batch.
package data
