package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// cacheDirEnv names the folder of compiled kernels (the host stand-in's
// in its subfolder host), instead of the user's cache folder's
// nabla/cuda; "off" keeps them in memory only.
const cacheDirEnv = "NABLA_CUDA_CACHE_DIR"

// imageKey names the compiled image (CUBIN or PTX) of source for the
// architecture arch by NVRTC version with options: the hex SHA-256 of all
// four, so that any change compiles afresh.
func imageKey(source, arch, version string, options []string) string {
	h := sha256.New()
	for _, s := range []string{"nabla cuda image 1", arch, version, strings.Join(options, "\x01"), source} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// imageCache keeps compiled images by imageKey: in memory for the process
// and, best effort, in files of dir ("" for none), so that a later process
// skips NVRTC. Failing to read or write a file is not an error: the image
// is compiled again.
type imageCache struct {
	dir string
	mu  sync.Mutex
	mem map[string][]byte
}

// images is the process's cache, in cacheDir.
var images = &imageCache{dir: cacheDir(), mem: map[string][]byte{}}

// cacheDir is $NABLA_CUDA_CACHE_DIR, else the user's cache folder's
// nabla/cuda, or "" for none.
func cacheDir() string {
	if d := os.Getenv(cacheDirEnv); d != "" {
		if d == "off" {
			return ""
		}
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "nabla", "cuda")
}

// get is the image under key, and whether it came from a file (which may
// be damaged: see drop).
func (c *imageCache) get(key string) (image []byte, fromFile bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if im, ok := c.mem[key]; ok {
		return im, false
	}
	if c.dir == "" {
		return nil, false
	}
	im, err := os.ReadFile(filepath.Join(c.dir, key+".img"))
	if err != nil || len(im) == 0 {
		return nil, false
	}
	return im, true
}

// put keeps image under key, in memory and in a file written whole or not
// at all (a temporary file renamed).
func (c *imageCache) put(key string, image []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mem[key] = image
	if c.dir == "" || os.MkdirAll(c.dir, 0o755) != nil {
		return
	}
	f, err := os.CreateTemp(c.dir, key+".*.tmp")
	if err != nil {
		return
	}
	_, werr := f.Write(image)
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), filepath.Join(c.dir, key+".img")) != nil {
		os.Remove(f.Name())
	}
}

// drop forgets the image under key (one the driver refused to load).
func (c *imageCache) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mem, key)
	if c.dir != "" {
		os.Remove(filepath.Join(c.dir, key+".img"))
	}
}
