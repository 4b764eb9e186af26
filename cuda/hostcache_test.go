package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// addSource is a module of one host kernel, add, adding c to each of n
// doubles.
func addSource(c string) string {
	return `void add_host(const unsigned long long *a) {
	double *x = (double *)a[0];
	long long n = (long long)a[1];
	for (long long i = 0; i < n; i++) x[i] += ` + c + `;
}
`
}

// runAdd compiles source on h and runs add on (1, 2, 3), returning the
// result or the first error.
func runAdd(h *hostBackend, source string) ([]float64, error) {
	m, err := h.compile(source)
	if err != nil {
		return nil, err
	}
	f, err := m.function("add")
	if err != nil {
		return nil, err
	}
	x := []float64{1, 2, 3}
	p, err := h.alloc(24)
	if err != nil {
		return nil, err
	}
	defer h.free(p)
	for _, step := range []func() error{
		func() error { return h.upload(p, unsafe.Pointer(&x[0]), 24) },
		func() error { return h.launch(f, 3, []uint64{uint64(p), 3}) },
		func() error { return h.download(unsafe.Pointer(&x[0]), p, 24) },
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// newCachingHost is a host backend whose modules are cached in dir (and
// in a table of its own, as a fresh process's).
func newCachingHost(t *testing.T, dir string) *hostBackend {
	t.Helper()
	h, err := newHostBackend()
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { h.close() })
	h.images = &imageCache{dir: dir, mem: map[string][]byte{}}
	h.modules = &moduleTable{libs: map[string]hostModule{}}
	return h
}

// The host stand-in compiles a module once: a later process loads it from
// the cache folder without the compiler. Entries are keyed by the source,
// the flags and the compiler's version, and a damaged one is compiled
// again, never loaded.
func TestHostModuleCache(t *testing.T) {
	dir := t.TempDir()
	want := []float64{2.5, 3.5, 4.5}
	src := addSource("1.5")
	noCompiler := filepath.Join(t.TempDir(), "no-cc")

	h := newCachingHost(t, dir)
	if got, err := runAdd(h, src); err != nil || !slices.Equal(got, want) {
		t.Fatalf("compiled: got %v, %v, want %v", got, err, want)
	}
	entries, _ := filepath.Glob(filepath.Join(dir, "*.img"))
	if len(entries) != 1 {
		t.Fatalf("got cache entries %v, want one", entries)
	}
	entry := entries[0]
	good, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	if so, ok := openImage(good); !ok || !strings.HasPrefix(string(so), "\x7fELF") {
		t.Fatalf("the entry is not a sealed shared library")
	}

	// A later process, without a compiler: from the file.
	later := newCachingHost(t, dir)
	later.cc = noCompiler
	if got, err := runAdd(later, src); err != nil || !slices.Equal(got, want) {
		t.Errorf("from the cache: got %v, %v, want %v", got, err, want)
	}

	// Another source, the items in reverse, another compiler version: other
	// entries (with no compiler, an error).
	for name, change := range map[string]func(h *hostBackend) string{
		"source":  func(h *hostBackend) string { return addSource("2.5") },
		"reverse": func(h *hostBackend) string { h.reverse = true; return src },
		"version": func(h *hostBackend) string { h.ccID += " (patched)"; return src },
	} {
		h := newCachingHost(t, dir)
		h.cc = noCompiler
		if _, err := runAdd(h, change(h)); err == nil || !strings.Contains(err.Error(), "compiling the kernels") {
			t.Errorf("%s changed: got %v, want a compile error (no cache entry)", name, err)
		}
	}

	// Damaged entries are not loaded (with no compiler, an error), and
	// with the compiler are replaced by a good one.
	flipped := slices.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	for name, damaged := range map[string][]byte{
		"flipped byte":     flipped,
		"truncated":        good[:len(good)/2],
		"checksum only":    good[:32],
		"empty":            {},
		"unsealed library": good[32:],
	} {
		if err := os.WriteFile(entry, damaged, 0o644); err != nil {
			t.Fatal(err)
		}
		h := newCachingHost(t, dir)
		h.cc = noCompiler
		if _, err := runAdd(h, src); err == nil || !strings.Contains(err.Error(), "compiling the kernels") {
			t.Errorf("%s: got %v, want a compile error", name, err)
		}
		if err := os.WriteFile(entry, damaged, 0o644); err != nil {
			t.Fatal(err)
		}
		h = newCachingHost(t, dir)
		if got, err := runAdd(h, src); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s, recompiled: got %v, %v, want %v", name, got, err, want)
		}
		if b, err := os.ReadFile(entry); err != nil {
			t.Errorf("%s: no entry after recompiling: %v", name, err)
		} else if _, ok := openImage(b); !ok {
			t.Errorf("%s: the entry is still damaged after recompiling", name)
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// Every host backend of a process shares the loaded modules: a second
// backend compiles nothing.
func TestHostModulesShared(t *testing.T) {
	a := newCachingHost(t, "")
	src := addSource("0.25")
	if _, err := runAdd(a, src); err != nil {
		t.Fatal(err)
	}
	b := newCachingHost(t, "")
	b.modules = a.modules
	b.cc = filepath.Join(t.TempDir(), "no-cc")
	if got, err := runAdd(b, src); err != nil || !slices.Equal(got, []float64{1.25, 2.25, 3.25}) {
		t.Errorf("second backend: got %v, %v", got, err)
	}
}

// Host backends on several goroutines compiling the same modules at once
// share the table and the cache folder: every result is right, and the
// folder ends with one good entry per module.
func TestHostModuleCacheConcurrent(t *testing.T) {
	dir := t.TempDir()
	modules := &moduleTable{libs: map[string]hostModule{}}
	consts := []string{"0.5", "4"}
	errs := make(chan error, 8)
	for g := range 4 {
		h := newCachingHost(t, dir)
		h.modules = modules
		go func() {
			for k := range consts {
				c := consts[(g+k)%len(consts)]
				got, err := runAdd(h, addSource(c))
				if want := addResult(c); err == nil && !slices.Equal(got, want) {
					err = fmt.Errorf("adding %s: got %v, want %v", c, got, want)
				}
				errs <- err
			}
		}()
	}
	for range 4 * len(consts) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	entries, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(entries) != len(consts) {
		t.Errorf("got cache files %v, want %d", entries, len(consts))
	}
	for _, e := range entries {
		if b, err := os.ReadFile(e); err != nil || !isSealed(b) {
			t.Errorf("%s: a damaged entry (%v)", e, err)
		}
	}
}

// addResult is what add with the constant c makes of (1, 2, 3).
func addResult(c string) []float64 {
	v, _ := strconv.ParseFloat(c, 64)
	return []float64{1 + v, 2 + v, 3 + v}
}

func isSealed(image []byte) bool {
	_, ok := openImage(image)
	return ok
}
