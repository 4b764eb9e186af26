package cuda

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The cache key changes with the source, the architecture, NVRTC's
// version and the options, and with nothing else.
func TestImageKey(t *testing.T) {
	opts := compileOptions("sm_90")
	base := imageKey("src", "sm_90", "13.0", opts)
	if len(base) != 64 || base != imageKey("src", "sm_90", "13.0", compileOptions("sm_90")) {
		t.Fatalf("key %q is not a stable SHA-256", base)
	}
	for what, k := range map[string]string{
		"source":  imageKey("src ", "sm_90", "13.0", opts),
		"arch":    imageKey("src", "sm_80", "13.0", opts),
		"version": imageKey("src", "sm_90", "13.1", opts),
		"options": imageKey("src", "sm_90", "13.0", opts[:2]),
		"split":   imageKey("sm_90src", "", "13.0", opts),
	} {
		if k == base {
			t.Errorf("changing the %s keeps the key", what)
		}
	}
}

// The cache keeps images in memory and in files a later process reads;
// drop forgets both, and with no folder it keeps memory only.
func TestImageCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nabla", "cuda")
	c := &imageCache{dir: dir, mem: map[string][]byte{}}
	key, image := imageKey("k", "sm_90", "13.0", nil), []byte("\x7fELF cubin")
	if im, _ := c.get(key); im != nil {
		t.Fatal("an empty cache has an image")
	}
	c.put(key, image)
	if im, fromFile := c.get(key); !bytes.Equal(im, image) || fromFile {
		t.Errorf("from memory: %q, from a file %v", im, fromFile)
	}
	later := &imageCache{dir: dir, mem: map[string][]byte{}}
	if im, fromFile := later.get(key); !bytes.Equal(im, image) || !fromFile {
		t.Errorf("from the file: %q, from a file %v", im, fromFile)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 1 {
		t.Errorf("files %q, want the image alone", files)
	}
	later.drop(key)
	if im, _ := later.get(key); im != nil {
		t.Error("dropped image still there")
	}
	if _, err := os.Stat(filepath.Join(dir, key+".img")); !os.IsNotExist(err) {
		t.Errorf("dropped file: %v", err)
	}
	mem := &imageCache{mem: map[string][]byte{}}
	mem.put(key, image)
	if im, _ := mem.get(key); !bytes.Equal(im, image) {
		t.Error("memory-only cache lost the image")
	}
	// A folder that cannot be made is not an error.
	blocked := &imageCache{dir: filepath.Join(dir, key+".img", "x"), mem: map[string][]byte{}}
	blocked.put(key, image)
	t.Setenv(cacheDirEnv, "off")
	if d := cacheDir(); d != "" {
		t.Errorf("cacheDir with %s=off: %q", cacheDirEnv, d)
	}
	t.Setenv(cacheDirEnv, dir)
	if d := cacheDir(); d != dir {
		t.Errorf("cacheDir: %q, want %q", d, dir)
	}
}

// Launches cover their threads with blocks of 256, up to 32 blocks a
// multiprocessor.
func TestLaunchGrid(t *testing.T) {
	for _, c := range []struct {
		threads int64
		sms     int
		grid    uint32
	}{
		{1, 132, 1}, {256, 132, 1}, {257, 132, 2}, {100003, 132, 391}, {32 * 132 * 256, 132, 4224},
		{1 << 40, 132, 4224}, {1 << 20, 0, 32}, {1 << 20, 1, 32},
	} {
		grid, block := launchGrid(c.threads, c.sms)
		if grid != c.grid || block != 256 {
			t.Errorf("launchGrid(%d, %d) = %d, %d; want %d, 256", c.threads, c.sms, grid, block, c.grid)
		}
		if int64(grid)*int64(block) < c.threads && grid != uint32(32*max(c.sms, 1)) {
			t.Errorf("launchGrid(%d, %d): %d blocks cover too few threads below the cap", c.threads, c.sms, grid)
		}
	}
}

// NVRTC compiles a CUBIN for the device's architecture where it can, else
// PTX for the newest older one.
func TestCompileTarget(t *testing.T) {
	supported := []int{75, 80, 86, 87, 89, 90}
	for _, c := range []struct {
		cc        int
		supported []int
		arch      string
		cubin, ok bool
	}{
		{90, nil, "sm_90", true, true},
		{90, supported, "sm_90", true, true},
		{86, supported, "sm_86", true, true},
		{100, supported, "compute_90", false, true},
		{88, supported, "compute_87", false, true},
		{70, supported, "", false, false},
	} {
		arch, cubin, ok := compileTarget(c.cc, c.supported)
		if arch != c.arch || cubin != c.cubin || ok != c.ok {
			t.Errorf("compileTarget(%d, %v) = %q, %v, %v; want %q, %v, %v", c.cc, c.supported, arch, cubin, ok, c.arch, c.cubin, c.ok)
		}
	}
	if opts := compileOptions("sm_90"); opts[0] != "--gpu-architecture=sm_90" {
		t.Errorf("options %q", opts)
	}
}
