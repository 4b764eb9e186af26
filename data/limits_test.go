package data

import (
	"math"
	"math/big"
	"testing"
)

// product64 against math/big, on products that overflow an int64.
func TestProduct64(t *testing.T) {
	for _, factors := range [][]int{
		{10, 10},
		{1 << 32, 1 << 32},            // wraps to 0
		{3, 6148914691236517206},      // wraps to 2
		{1<<61 + 1, 8},                // wraps to 8
		{math.MaxInt, 0, math.MaxInt}, // 0
		{math.MaxInt},
		{math.MaxInt, 1},
		{math.MaxInt, 2},
		nil,
		{-1, 2},
		{math.MinInt, -1},
	} {
		want, wantOK := big.NewInt(1), true
		for _, n := range factors {
			want.Mul(want, big.NewInt(int64(n)))
			wantOK = wantOK && n >= 0
		}
		wantOK = wantOK && want.IsInt64()
		got, ok := product64(factors...)
		if ok != wantOK || ok && got != want.Int64() {
			t.Errorf("case %v: got %d, %v, want %v, %v", factors, got, ok, want, wantOK)
		}
	}
}
