// Package site gives tests the file:line of their own code, as nabla's
// errors name it ("model_test.go:42").
package site

import (
	"fmt"
	"path/filepath"
	"runtime"
)

// At is the file:line delta lines below the line calling it.
func At(delta int) string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", filepath.Base(file), line+delta)
}
