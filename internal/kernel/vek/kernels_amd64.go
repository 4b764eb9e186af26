//go:build amd64 && !purego

package vek

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd _asm && go run . -out ../vek_amd64.s -stubs ../stubs_amd64.go -pkg vek"

// useAsm is set when the exported functions use the assembly, where the
// processor has AVX2.
var useAsm = cpu.X86.HasAVX2

// setUseAsm sets useAsm, for tests; it returns false, leaving it, where the
// processor cannot run the assembly.
func setUseAsm(b bool) bool {
	if b && !cpu.X86.HasAVX2 {
		return false
	}
	useAsm = b
	return true
}

// The dispatchers below call the kernel of op, for their element type.

func vv32(op Op, dst, x, y []float32) {
	switch op {
	case Add:
		addVV32AVX2(dst, x, y)
	case Sub:
		subVV32AVX2(dst, x, y)
	case Mul:
		mulVV32AVX2(dst, x, y)
	case Div:
		divVV32AVX2(dst, x, y)
	}
}

func vs32(op Op, dst, x []float32, c float32) {
	switch op {
	case Add:
		addVS32AVX2(dst, x, c)
	case Sub:
		subVS32AVX2(dst, x, c)
	case Mul:
		mulVS32AVX2(dst, x, c)
	case Div:
		divVS32AVX2(dst, x, c)
	}
}

func sv32(op Op, dst []float32, c float32, y []float32) {
	switch op {
	case Add:
		addSV32AVX2(dst, c, y)
	case Sub:
		subSV32AVX2(dst, c, y)
	case Mul:
		mulSV32AVX2(dst, c, y)
	case Div:
		divSV32AVX2(dst, c, y)
	}
}

func unary32(op UnaryOp, dst, x []float32) {
	switch op {
	case Neg:
		neg32AVX2(dst, x)
	case Square:
		square32AVX2(dst, x)
	case Abs:
		abs32AVX2(dst, x)
	case ReLU:
		relu32AVX2(dst, x)
	case Sqrt:
		sqrt32AVX2(dst, x)
	}
}

func vv64(op Op, dst, x, y []float64) {
	switch op {
	case Add:
		addVV64AVX2(dst, x, y)
	case Sub:
		subVV64AVX2(dst, x, y)
	case Mul:
		mulVV64AVX2(dst, x, y)
	case Div:
		divVV64AVX2(dst, x, y)
	}
}

func vs64(op Op, dst, x []float64, c float64) {
	switch op {
	case Add:
		addVS64AVX2(dst, x, c)
	case Sub:
		subVS64AVX2(dst, x, c)
	case Mul:
		mulVS64AVX2(dst, x, c)
	case Div:
		divVS64AVX2(dst, x, c)
	}
}

func sv64(op Op, dst []float64, c float64, y []float64) {
	switch op {
	case Add:
		addSV64AVX2(dst, c, y)
	case Sub:
		subSV64AVX2(dst, c, y)
	case Mul:
		mulSV64AVX2(dst, c, y)
	case Div:
		divSV64AVX2(dst, c, y)
	}
}

func unary64(op UnaryOp, dst, x []float64) {
	switch op {
	case Neg:
		neg64AVX2(dst, x)
	case Square:
		square64AVX2(dst, x)
	case Abs:
		abs64AVX2(dst, x)
	case ReLU:
		relu64AVX2(dst, x)
	case Sqrt:
		sqrt64AVX2(dst, x)
	}
}

// useAVX512 is set when Adam uses its AVX-512 kernels, where the
// processor has AVX-512 (and BMI2, which they use too).
var useAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasBMI2

// setUseAVX512 sets useAVX512, for tests; it returns false, leaving it,
// where the processor cannot run those kernels.
func setUseAVX512(b bool) bool {
	if b && !(cpu.X86.HasAVX512F && cpu.X86.HasBMI2) {
		return false
	}
	useAVX512 = b
	return true
}

// adam32 and adam64 run the kernel for mode, the one that does not
// divide by the bias correction when it is 1 (noCorr), with AVX-512 where
// useAVX512 is set. (Direct calls: k, which the kernels do not keep, does
// not escape through them as it would through a function value.)
func adam32(mode AdamDecay, noCorr bool, p1, m1, v1, p, g, m, v, k []float32) {
	switch {
	case !useAVX512:
		switch {
		case mode == NoDecay && !noCorr:
			adam32AVX2(p1, m1, v1, p, g, m, v, k)
		case mode == NoDecay && noCorr:
			adamNoCorr32AVX2(p1, m1, v1, p, g, m, v, k)
		case mode == L2Decay && !noCorr:
			adamL232AVX2(p1, m1, v1, p, g, m, v, k)
		case mode == L2Decay && noCorr:
			adamL2NoCorr32AVX2(p1, m1, v1, p, g, m, v, k)
		case mode == DecoupledDecay && !noCorr:
			adamW32AVX2(p1, m1, v1, p, g, m, v, k)
		default:
			adamWNoCorr32AVX2(p1, m1, v1, p, g, m, v, k)
		}
	default:
		switch {
		case mode == NoDecay && !noCorr:
			adam32AVX512(p1, m1, v1, p, g, m, v, k)
		case mode == NoDecay && noCorr:
			adamNoCorr32AVX512(p1, m1, v1, p, g, m, v, k)
		case mode == L2Decay && !noCorr:
			adamL232AVX512(p1, m1, v1, p, g, m, v, k)
		case mode == L2Decay && noCorr:
			adamL2NoCorr32AVX512(p1, m1, v1, p, g, m, v, k)
		case mode == DecoupledDecay && !noCorr:
			adamW32AVX512(p1, m1, v1, p, g, m, v, k)
		default:
			adamWNoCorr32AVX512(p1, m1, v1, p, g, m, v, k)
		}
	}
}

func adam64(mode AdamDecay, noCorr bool, p1, m1, v1, p, g, m, v, k []float64) {
	switch {
	case !useAVX512:
		switch {
		case mode == NoDecay && !noCorr:
			adam64AVX2(p1, m1, v1, p, g, m, v, k)
		case mode == NoDecay && noCorr:
			adamNoCorr64AVX2(p1, m1, v1, p, g, m, v, k)
		case mode == L2Decay && !noCorr:
			adamL264AVX2(p1, m1, v1, p, g, m, v, k)
		case mode == L2Decay && noCorr:
			adamL2NoCorr64AVX2(p1, m1, v1, p, g, m, v, k)
		case mode == DecoupledDecay && !noCorr:
			adamW64AVX2(p1, m1, v1, p, g, m, v, k)
		default:
			adamWNoCorr64AVX2(p1, m1, v1, p, g, m, v, k)
		}
	default:
		switch {
		case mode == NoDecay && !noCorr:
			adam64AVX512(p1, m1, v1, p, g, m, v, k)
		case mode == NoDecay && noCorr:
			adamNoCorr64AVX512(p1, m1, v1, p, g, m, v, k)
		case mode == L2Decay && !noCorr:
			adamL264AVX512(p1, m1, v1, p, g, m, v, k)
		case mode == L2Decay && noCorr:
			adamL2NoCorr64AVX512(p1, m1, v1, p, g, m, v, k)
		case mode == DecoupledDecay && !noCorr:
			adamW64AVX512(p1, m1, v1, p, g, m, v, k)
		default:
			adamWNoCorr64AVX512(p1, m1, v1, p, g, m, v, k)
		}
	}
}

func where32(dst, keep, x []float32, sx int, y []float32, sy int) {
	switch {
	case sx == 1 && sy == 1:
		whereVV32AVX2(dst, keep, x, y)
	case sx == 1:
		whereVS32AVX2(dst, keep, x, y[0])
	case sy == 1:
		whereSV32AVX2(dst, keep, x[0], y)
	default:
		whereSS32AVX2(dst, keep, x[0], y[0])
	}
}

func where64(dst, keep, x []float64, sx int, y []float64, sy int) {
	switch {
	case sx == 1 && sy == 1:
		whereVV64AVX2(dst, keep, x, y)
	case sx == 1:
		whereVS64AVX2(dst, keep, x, y[0])
	case sy == 1:
		whereSV64AVX2(dst, keep, x[0], y)
	default:
		whereSS64AVX2(dst, keep, x[0], y[0])
	}
}

// adamM32Wide runs AdamM32's AVX-512 kernel for mode and reports true, or
// reports false without AVX-512 (len(p1) must be a multiple of 16).
func adamM32Wide(mode AdamDecay, noCorr bool, p1 []float64, m1, v1 []float32, p, g []float64, m, v, k []float32, decay []float64) bool {
	if !useAVX512 {
		return false
	}
	switch {
	case mode == NoDecay && !noCorr:
		adam64M32AVX512(p1, m1, v1, p, g, m, v, k, decay)
	case mode == NoDecay && noCorr:
		adamNoCorr64M32AVX512(p1, m1, v1, p, g, m, v, k, decay)
	case mode == L2Decay && !noCorr:
		adamL264M32AVX512(p1, m1, v1, p, g, m, v, k, decay)
	case mode == L2Decay && noCorr:
		adamL2NoCorr64M32AVX512(p1, m1, v1, p, g, m, v, k, decay)
	case mode == DecoupledDecay && !noCorr:
		adamW64M32AVX512(p1, m1, v1, p, g, m, v, k, decay)
	default:
		adamWNoCorr64M32AVX512(p1, m1, v1, p, g, m, v, k, decay)
	}
	return true
}
