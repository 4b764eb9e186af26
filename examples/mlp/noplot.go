//go:build !plot

package main

// canPlot says that this build has no plotting: gonum.org/v1/plot, its
// fonts and its LaTeX renderer would add 9 modules (27 MB to download)
// and 106 packages to the 186 that a first go run ./examples/mlp
// compiles, for a figure few runs ask for. Train refuses -plot up front, before training, saying how to
// build the command with it.
const canPlot = false

// plotLosses is never called in this build (Train checks canPlot first).
func plotLosses(path string, res Result) error { return errNoPlot }
