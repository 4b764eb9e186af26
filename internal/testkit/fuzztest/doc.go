// Package fuzztest turns fuzzers' bytes into graphs: random sequences of
// ops' builders over random shapes, axes and inputs, for the fuzz targets
// that check that building never panics, that passes do not change
// values, that derivatives agree with finite differences, and that Vmap,
// ONNX export and import, and vm.Runner at other batch sizes give the
// values of the graph they start from.
package fuzztest
