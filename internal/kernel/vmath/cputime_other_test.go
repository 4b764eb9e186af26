//go:build !linux

package vmath

import "time"

// threadCPU is not measured here.
func threadCPU() (time.Duration, bool) { return 0, false }
