package compile

import (
	"math/rand/v2"
	"testing"
)

// Direct recovery of a symmetric matrix from its star-coloured products,
// in plain arithmetic: H random and symmetric, its pattern holding every
// nonzero and some zeros on one side only, B[i][c] = Σ_{colour j = c}
// H[i][j], and every entry read back exactly, some from their columns.
func TestSymmetricGather(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	byColumn := 0
	for trial := range 300 {
		n := 1 + rng.IntN(30)
		density := rng.Float64() * 0.4
		h := make([]float64, n*n)
		in := make([]bool, n*n)
		for i := range n {
			if rng.IntN(4) != 0 {
				h[i*n+i] = rng.NormFloat64()
				in[i*n+i] = true
			}
			for j := range i {
				switch r := rng.Float64(); {
				case r < density:
					v := rng.NormFloat64()
					h[i*n+j], h[j*n+i] = v, v
					in[i*n+j], in[j*n+i] = true, true
				case r < density*1.2: // a structural zero, one side only
					in[i*n+j] = true
				}
			}
		}
		p := &Pattern{Rows: n, Columns: n, RowStart: make([]int, n+1)}
		for i := range n {
			for j := range n {
				if in[i*n+j] {
					p.Cols = append(p.Cols, j)
				}
			}
			p.RowStart[i+1] = len(p.Cols)
		}
		colors, nc, err := StarColor(p)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]float64, nc*n) // colour-major
		for i := range n {
			for j := range n {
				b[colors[j]*n+i] += h[i*n+j]
			}
		}
		at := symmetricGather(p, colors, nc)
		if len(at) != p.NNZ() {
			t.Fatalf("%d positions for %d entries", len(at), p.NNZ())
		}
		for i := range n {
			for k := p.RowStart[i]; k < p.RowStart[i+1]; k++ {
				j := p.Cols[k]
				if got := b[at[k]]; got != h[i*n+j] {
					t.Fatalf("trial %d: entry (%d, %d): recovered %v, want %v", trial, i, j, got, h[i*n+j])
				}
				if at[k] != int64(colors[j]*n+i) {
					byColumn++
				}
			}
		}
	}
	if byColumn == 0 {
		t.Error("no entry was read from its column's product")
	}
}
