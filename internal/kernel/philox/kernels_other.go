//go:build !amd64 || purego

package philox

// useAsm is false: there is no assembly here.
var useAsm = false

func normals32AVX2([]float32, *[6]uint32) { panic("philox: no assembly on this platform") }
