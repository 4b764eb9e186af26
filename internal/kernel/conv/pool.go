package conv

import "fmt"

// MaxHalves is the 2×2 max pooling at stride 2 of rows pairs of rows w
// elements wide: it sets dst[i·ldd + j], for i < rows and j < ow, to the
// maximum of src at rows i·lds and i·lds + w, columns 2j and 2j+1, the
// first maximum in reading order (a later tap only where greater: it
// tells +0 from -0). It reports false where the assembly kernels do not
// run here (writing nothing), or where a NaN is among the inputs (dst is
// then written in part): the caller computes those windows otherwise. It
// panics where a slice is too short.
func MaxHalves[T Float](dst []T, ldd int, src []T, lds, w, rows, ow int) bool {
	if rows <= 0 || ow <= 0 {
		return true
	}
	if 2*ow > w || ldd < ow || len(dst) < (rows-1)*ldd+ow || len(src) < (rows-1)*lds+w+2*ow {
		panic(fmt.Sprintf("conv.MaxHalves: %d rows of %d from %d elements (rows %d wide, pairs %d apart) to %d (%d apart)",
			rows, ow, len(src), w, lds, len(dst), ldd))
	}
	return useAsm && maxHalves(dst, ldd, src, lds, w, rows, ow)
}
