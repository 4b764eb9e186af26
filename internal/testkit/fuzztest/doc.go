// Package fuzztest turns fuzzers' bytes into graphs: random sequences of
// ops' builders over random shapes, axes and inputs, for the fuzz targets
// that check that building never panics, that passes do not change values
// and that derivatives agree with finite differences.
package fuzztest
