package data

import (
	"math"
	"math/big"
	"testing"
)

// productUpTo against math/big, on products that overflow an int64.
func TestProductUpTo(t *testing.T) {
	for _, tc := range []struct {
		limit   int64
		factors []int
	}{
		{100, []int{10, 10}},
		{99, []int{10, 10}},
		{math.MaxInt64, []int{1 << 32, 1 << 32}},       // wraps to 0
		{math.MaxInt64, []int{3, 6148914691236517206}}, // wraps to 2
		{math.MaxInt64, []int{1<<61 + 1, 8}},
		{math.MaxInt64, []int{math.MaxInt, 0, math.MaxInt}},
		{math.MaxInt64, []int{math.MaxInt}},
		{math.MaxInt64, nil},
		{5, []int{-1, 2}},
		{math.MaxInt64, []int{math.MinInt, -1}},
	} {
		want, wantOK := big.NewInt(1), true
		for _, n := range tc.factors {
			want.Mul(want, big.NewInt(int64(n)))
			wantOK = wantOK && n >= 0
		}
		wantOK = wantOK && want.Cmp(big.NewInt(tc.limit)) <= 0
		got, ok := productUpTo(tc.limit, tc.factors...)
		if ok != wantOK || ok && got != want.Int64() {
			t.Errorf("case %d, %v: got %d, %v, want %v, %v", tc.limit, tc.factors, got, ok, want, wantOK)
		}
	}
}
