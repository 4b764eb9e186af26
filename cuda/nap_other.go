//go:build !linux

package cuda

import "time"

// nap sleeps for d (see nap_linux.go).
func nap(d time.Duration) { time.Sleep(d) }
