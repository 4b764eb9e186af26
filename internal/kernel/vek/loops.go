package vek

import "math"

// The Go loops: the pure-Go implementation and the assembly's reference.

func vvGo[T Float](op Op, dst, x, y []T) {
	x, y = x[:len(dst)], y[:len(dst)]
	switch op {
	case Add:
		for i := range dst {
			dst[i] = x[i] + y[i]
		}
	case Sub:
		for i := range dst {
			dst[i] = x[i] - y[i]
		}
	case Mul:
		for i := range dst {
			dst[i] = x[i] * y[i]
		}
	case Div:
		for i := range dst {
			dst[i] = x[i] / y[i]
		}
	}
}

func vsGo[T Float](op Op, dst, x []T, c T) {
	x = x[:len(dst)]
	switch op {
	case Add:
		for i := range dst {
			dst[i] = x[i] + c
		}
	case Sub:
		for i := range dst {
			dst[i] = x[i] - c
		}
	case Mul:
		for i := range dst {
			dst[i] = x[i] * c
		}
	case Div:
		for i := range dst {
			dst[i] = x[i] / c
		}
	}
}

func svGo[T Float](op Op, dst []T, c T, y []T) {
	y = y[:len(dst)]
	switch op {
	case Add:
		for i := range dst {
			dst[i] = c + y[i]
		}
	case Sub:
		for i := range dst {
			dst[i] = c - y[i]
		}
	case Mul:
		for i := range dst {
			dst[i] = c * y[i]
		}
	case Div:
		for i := range dst {
			dst[i] = c / y[i]
		}
	}
}

func unaryGo[T Float](op UnaryOp, dst, x []T) {
	x = x[:len(dst)]
	switch op {
	case Neg:
		for i, v := range x {
			dst[i] = -v
		}
	case Square:
		for i, v := range x {
			dst[i] = v * v
		}
	case Abs:
		for i, v := range x {
			dst[i] = T(math.Abs(float64(v)))
		}
	case ReLU:
		for i, v := range x {
			dst[i] = max(v, 0)
		}
	case Sqrt: // through float64, float32 still rounds once
		for i, v := range x {
			dst[i] = T(math.Sqrt(float64(v)))
		}
	}
}
