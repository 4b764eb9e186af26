package graph_test

import (
	"math"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/graph"
)

func TestBytes(t *testing.T) {
	cases := []struct {
		dtype graph.Type
		limit int64
		want  int64
		err   string
	}{
		{graph.TypeOf(graph.Float64, 2, 3), 1 << 20, 48, ""},
		{graph.TypeOf(graph.Float32, 2, 3), 1 << 20, 24, ""},
		{graph.TypeOf(graph.Float64), 8, 8, ""},
		{graph.TypeOf(graph.Float64, 0, 1<<40), 1, 0, ""},
		{graph.TypeOf(graph.Float64, 1<<20, 1<<20), 1 << 30, 8 << 40, "over the memory limit of 1073741824 bytes (1 GiB)"},
		{graph.TypeOf(graph.Float64, 3, 1<<62), 1 << 30, 0, "more elements than an int can count"},
		{graph.TypeOf(graph.Float64, 1<<61), math.MaxInt64, 0, "needs more bytes than an int can count"},
	}
	for _, c := range cases {
		got, err := graph.Bytes(c.dtype.DType, c.dtype.Shape, c.limit)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("case %v: got %d, %v, want %d", c.dtype, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("case %v: got error %v, want one containing %q", c.dtype, err, c.err)
		}
	}
}

// The default limit is a positive share of memory; SetMemoryLimit changes
// it and restores it.
func TestSetMemoryLimit(t *testing.T) {
	def := graph.MemoryLimit()
	if def <= 0 {
		t.Fatalf("default memory limit %d", def)
	}
	if prev := graph.SetMemoryLimit(100); prev != def {
		t.Errorf("SetMemoryLimit returned %d, want %d", prev, def)
	}
	defer graph.SetMemoryLimit(0)
	if got := graph.MemoryLimit(); got != 100 {
		t.Errorf("MemoryLimit = %d, want 100", got)
	}
	g := graph.New()
	ok := g.Param("small", graph.NewDense(graph.Float64, 12)) // 96 bytes
	big := g.Const(graph.NewDense(graph.Float64, 13))         // 104 bytes
	if ok.Err() != nil {
		t.Errorf("a 96-byte parameter: %v", ok.Err())
	}
	if err := big.Err(); err == nil || !strings.Contains(err.Error(), "Const") || !strings.Contains(err.Error(), "104 bytes, over the memory limit of 100 bytes") {
		t.Errorf("a 104-byte constant under a 100-byte limit: got %v", err)
	}
	graph.SetMemoryLimit(0)
	if got := graph.MemoryLimit(); got != def {
		t.Errorf("after SetMemoryLimit(0): %d, want the default %d", got, def)
	}
}

func TestFormatBytes(t *testing.T) {
	for b, want := range map[int64]string{
		12:      "12 bytes",
		1536:    "1536 bytes (1.5 KiB)",
		8 << 40: "8796093022208 bytes (8 TiB)",
	} {
		if got := graph.FormatBytes(b); got != want {
			t.Errorf("case %d: got %q, want %q", b, got, want)
		}
	}
}
