//go:build !linux

package compile_test

import "time"

// threadCPU is not measured here.
func threadCPU() (time.Duration, bool) { return 0, false }
