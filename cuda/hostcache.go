package cuda

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
)

// The host backend compiles each module with the C compiler once: its
// loaded library is kept for the process (hostModules) and, sealed with a
// checksum, in the cache folder's "host" subfolder (hostImages), so that a
// later process, a test run among them, loads it without the compiler. An
// entry is named by hostKey, a hash of the compiler (its path and its
// --version), the flags and the source, so that any change compiles
// afresh; it is written whole or not at all (imageCache.put); one whose
// checksum or load fails is dropped and compiled again.

// hostKey names the module of source compiled with args by the compiler
// ccID names (compilerID): the hex SHA-256 of all three.
func hostKey(ccID string, args []string, source string) string {
	h := sha256.New()
	for _, s := range []string{"nabla host module 1", ccID, strings.Join(args, "\x01"), source} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// compilerIDs caches compilerID's answers by path.
var compilerIDs sync.Map // path → compilerIdentity

// compilerIdentity is compilerID's answer.
type compilerIdentity struct {
	id    string
	known bool
}

// compilerID names the compiler cc by its path and what cc --version
// prints, and reports whether that printed anything: where it does not,
// modules are not cached in files (their compiler is unknown).
func compilerID(cc string) (string, bool) {
	if c, ok := compilerIDs.Load(cc); ok {
		return c.(compilerIdentity).id, c.(compilerIdentity).known
	}
	out, err := exec.Command(cc, "--version").Output()
	version := string(bytes.TrimSpace(out))
	c := compilerIdentity{cc + "\n" + version, err == nil && version != ""}
	compilerIDs.Store(cc, c)
	return c.id, c.known
}

// hostImages keeps the host modules' sealed shared libraries in the
// cache folder's "host" subfolder (none where cacheDir is "").
var hostImages = &imageCache{dir: hostCacheDir(cacheDir()), mem: map[string][]byte{}}

// hostCacheDir is dir's "host" subfolder, or "" for none.
func hostCacheDir(dir string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "host")
}

// sealImage prefixes a shared library with its SHA-256, which openImage
// checks: a library damaged on disk is recompiled, never run.
func sealImage(so []byte) []byte {
	sum := sha256.Sum256(so)
	return append(sum[:], so...)
}

// openImage returns the library a sealed image holds, and whether its
// checksum matches.
func openImage(image []byte) ([]byte, bool) {
	if len(image) <= sha256.Size {
		return nil, false
	}
	so := image[sha256.Size:]
	sum := sha256.Sum256(so)
	return so, bytes.Equal(sum[:], image[:sha256.Size])
}

// moduleTable holds the process's loaded host modules by key. Every host
// backend shares them: a module's code keeps no state, and a library
// once loaded stays loaded (its file may go).
type moduleTable struct {
	mu   sync.Mutex
	libs map[string]hostModule
}

// hostModules is the process's table.
var hostModules = &moduleTable{libs: map[string]hostModule{}}

// get returns the module of key, if loaded.
func (t *moduleTable) get(key string) (hostModule, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, ok := t.libs[key]
	return m, ok
}

// load loads the shared library lib as the module of key, unless one is
// loaded already.
func (t *moduleTable) load(key, lib string) (hostModule, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m, ok := t.libs[key]; ok {
		return m, nil
	}
	handle, err := purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return hostModule{}, fmt.Errorf("cuda: host backend: loading the kernels: %v", err)
	}
	m := hostModule{handle}
	t.libs[key] = m
	return m, nil
}
