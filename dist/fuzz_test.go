package dist

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// FuzzLauncher: what dist reads from its environment — the launchers'
// rank and size variables, the cpu list of /sys and /proc/loadavg —
// never panics, whatever it holds; a rank it accepts is a rank of the
// group the variables give, and a count it reads is never negative.
func FuzzLauncher(f *testing.F) {
	f.Add(uint8(0), "1", "2", "0-1", "0.90 1.58 2.05 3/456 12345")
	f.Add(uint8(1), "3", "2", "0-15,32-47\n", "1 1 1 0/1 1")
	f.Add(uint8(2), "-1", "9223372036854775807", "0-9223372036854775807", "")
	f.Add(uint8(0), "0", "1", "5,3-", "a b c d")
	f.Fuzz(func(t *testing.T, which uint8, rank, size, cpus, loadavg string) {
		v := launchers[int(which)%len(launchers)]
		env := map[string]string{v.rank: rank, v.size: size}
		l, ok, err := detect(func(k string) string { return env[k] })
		r, err1 := strconv.Atoi(rank)
		s, err2 := strconv.Atoi(size)
		valid := rank != "" && size != "" && err1 == nil && err2 == nil && s >= 1 && r >= 0 && r < s
		switch {
		case ok && (l.rank != r || l.size != s || !valid):
			t.Fatalf("%s=%q %s=%q: accepted as rank %d of %d", v.rank, rank, v.size, size, l.rank, l.size)
		case !ok && err == nil && rank != "" && size != "":
			t.Fatalf("%s=%q %s=%q: neither accepted nor refused", v.rank, rank, v.size, size)
		case err != nil && (valid || !strings.Contains(err.Error(), "are not a rank in [0, size)")):
			t.Fatalf("%s=%q %s=%q: %v", v.rank, rank, v.size, size, err)
		}
		n := cpuListSize(cpus)
		if n < 0 {
			t.Fatalf("cpuListSize(%q) = %d", cpus, n)
		}
		var a, z int
		if k, err := fmt.Sscanf(cpus, "%d-%d", &a, &z); k == 2 && err == nil && fmt.Sprintf("%d-%d", a, z) == cpus && 0 <= a && a <= z && z-a < 1<<20 {
			if n != z-a+1 {
				t.Fatalf("cpuListSize(%q) = %d, want %d", cpus, n, z-a+1)
			}
		}
		if k, ok := runnableOf(loadavg); ok && k < 0 {
			t.Fatalf("runnableOf(%q) = %d", loadavg, k)
		}
	})
}
