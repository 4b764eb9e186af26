package philox

import (
	"math"
	"testing"
)

// normalsGo is Normals32 without the assembly.
func normalsGo(out []float32, ctr [4]uint32, key [2]uint32) {
	was := useAsm
	useAsm = false
	defer func() { useAsm = was }()
	Normals32(out, ctr, key)
}

// The AVX2 kernel gives the Go loop's values bit for bit over keys,
// counters (the block index near its wrap included) and lengths that
// leave a tail for the Go loop.
func TestNormals32AsmMatchesGo(t *testing.T) {
	if !useAsm {
		t.Skip("no AVX2 here")
	}
	keys := [][2]uint32{{0, 0}, {1, 0}, {0x89abcdef, 0x01234567}, {math.MaxUint32, math.MaxUint32}}
	ctrs := [][4]uint32{{0, 0, 0, 0}, {5, 1, 0, 7}, {math.MaxUint32 - 20, 3, 9, 2}, {12345, math.MaxUint32, math.MaxUint32, math.MaxUint32}}
	got, want := make([]float32, 1<<16+36), make([]float32, 1<<16+36)
	for _, key := range keys {
		for _, ctr := range ctrs {
			for _, n := range []int{32, 36, 64, 100, len(got)} {
				Normals32(got[:n], ctr, key)
				normalsGo(want[:n], ctr, key)
				for i := range n {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("key %x counter %x, %d values: element %d is %v, want %v", key, ctr, n, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// BenchmarkNormals32 measures the float32 normals of Normals32 per second
// (bytes of output), with and without the assembly.
func BenchmarkNormals32(b *testing.B) {
	out := make([]float32, 1<<16)
	for _, asm := range []bool{false, true} {
		name := "go"
		if asm {
			name = "avx2"
		}
		b.Run(name, func(b *testing.B) {
			if asm && !useAsm {
				b.Skip("no AVX2 here")
			}
			was := useAsm
			useAsm = asm
			defer func() { useAsm = was }()
			b.SetBytes(int64(4 * len(out)))
			for b.Loop() {
				Normals32(out, [4]uint32{0, 1, 2, 3}, [2]uint32{4, 5})
			}
		})
	}
}
