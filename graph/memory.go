package graph

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"gorgonia.org/tensor"
)

// fallbackMemoryLimit is the default limit where physical memory cannot be
// read (no /proc/meminfo).
const fallbackMemoryLimit = 8 << 30

// memoryLimit is the limit SetMemoryLimit set, or 0 for the default.
var memoryLimit atomic.Int64

// defaultMemoryLimit is half the machine's physical memory.
func defaultMemoryLimit() int64 {
	if total := physicalBytes(); total > 0 {
		return total / 2
	}
	return fallbackMemoryLimit
}

// physicalBytes is the machine's physical memory, read once; 0 where it
// cannot be read.
var physicalBytes = sync.OnceValue(func() int64 {
	total, _ := physicalMemory()
	return total
})

// physicalMemory reads MemTotal from /proc/meminfo.
func physicalMemory() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[0] == "MemTotal:" && fields[2] == "kB" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || kb <= 0 || kb > math.MaxInt64/1024 {
				return 0, false
			}
			return kb * 1024, true
		}
	}
	return 0, false
}

// MemoryLimit is the most bytes nabla allocates for one purpose: a
// parameter or constant made at build time, the buffers of one machine
// (unless vm.WithMemoryLimit says otherwise), a checkpoint's tensors.
// Asking for more is an error, before anything is allocated, rather than a
// process killed for lack of memory. The default is half the physical
// memory (8 GiB where it cannot be read); SetMemoryLimit changes it.
func MemoryLimit() int64 {
	if l := memoryLimit.Load(); l > 0 {
		return l
	}
	return defaultMemoryLimit()
}

// SetMemoryLimit sets MemoryLimit to bytes (a value ≤ 0 restores the
// default) and returns the previous limit. It is safe to call from any
// goroutine.
func SetMemoryLimit(bytes int64) (previous int64) {
	previous = MemoryLimit()
	memoryLimit.Store(max(bytes, 0))
	return previous
}

// Bytes is the memory a tensor of dtype and shape needs, or an error when
// its size overflows an int or the bytes exceed limit (MemoryLimit when
// limit ≤ 0).
func Bytes(dtype tensor.Dtype, shape []int, limit int64) (int64, error) {
	if err := checkShape(shape); err != nil {
		return 0, err
	}
	if limit <= 0 {
		limit = MemoryLimit()
	}
	elem := int64(8)
	if dtype == Float32 {
		elem = 4
	}
	n := int64(ShapeSize(shape)) // at most MaxInt/8: checkShape says so
	if b := n * elem; b > limit {
		return b, fmt.Errorf("%s%s needs %s, over the memory limit of %s (graph.SetMemoryLimit)",
			dtype, ShapeString(shape), FormatBytes(b), FormatBytes(limit))
	}
	return n * elem, nil
}

// FormatBytes writes a byte count exactly and, from a KiB on, in binary
// units too: "17179869184 bytes (16 GiB)".
func FormatBytes(b int64) string {
	s := strconv.FormatInt(b, 10) + " bytes"
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := float64(b), -1
	for v >= 1024 && u+1 < len(units) {
		v /= 1024
		u++
	}
	if u < 0 {
		return s
	}
	return fmt.Sprintf("%s (%.3g %s)", s, v, units[u])
}
