// Package libpath holds where nabla looks for the shared libraries it
// loads at run time (CUDA's, in package cuda; NCCL, in package dist)
// beyond the dynamic linker's own search.
package libpath

import (
	"path/filepath"
	"slices"
	"strings"
)

// SitePackages are the Python package folders that may hold NVIDIA's
// wheels, most specific first: the virtual
// environment's, conda's, the user's, then the system's. root prefixes the
// system's absolute paths and getenv reads the environment, so that tests
// can search a fake tree.
func SitePackages(root string, getenv func(string) string) []string {
	var patterns []string
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := getenv(v); p != "" {
			patterns = append(patterns, filepath.Join(p, "lib", "python3*", "site-packages"))
		}
	}
	if h := getenv("HOME"); h != "" {
		patterns = append(patterns, filepath.Join(h, ".local", "lib", "python3*", "site-packages"))
	}
	for _, p := range []string{
		"/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
		"/usr/lib/python3/dist-packages", "/usr/lib/python3*/dist-packages", "/usr/lib/python3*/site-packages",
		"/opt/conda/lib/python3*/site-packages",
	} {
		patterns = append(patterns, filepath.Join(root, p))
	}
	var sites []string
	for _, p := range patterns {
		m, _ := filepath.Glob(p)
		// The newest Python first: python3.12 before python3.10.
		slices.SortFunc(m, func(a, b string) int { return strings.Compare(b, a) })
		for _, s := range m {
			if !slices.Contains(sites, s) {
				sites = append(sites, s)
			}
		}
	}
	return sites
}
