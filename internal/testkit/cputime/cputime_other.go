//go:build !linux

package cputime

import "time"

// Thread is not measured here: it returns false.
func Thread() (time.Duration, bool) { return 0, false }

// Process is not measured here: it returns false.
func Process() (time.Duration, bool) { return 0, false }
