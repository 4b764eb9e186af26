//go:build !amd64 || purego

package vmath

// Without assembly there is no second implementation.
var asmKernels *kernelSet
