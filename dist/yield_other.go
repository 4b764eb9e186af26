//go:build !linux

package dist

import "runtime"

// yield lets other goroutines run; elsewhere than Linux, the operating
// system's scheduler is left to share the processor.
func yield() { runtime.Gosched() }
