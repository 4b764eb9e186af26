//go:build !openblas || !cgo

package main

func unavailable() string {
	return "build with -tags openblas (cgo and libopenblas-dev)"
}

func setThreads(int) {}

func newProduct(string, int) func() { return func() {} }
