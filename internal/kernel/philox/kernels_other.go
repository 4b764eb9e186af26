//go:build !amd64 || purego

package philox

// useAsm is false: there is no assembly here.
var useAsm = false

func normals32AVX2([]float32, *[6]uint32) { panic("philox: no assembly on this platform") }

func normals64AVX2([]float64, *[6]uint32) { panic("philox: no assembly on this platform") }
