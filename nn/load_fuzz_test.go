package nn

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"slices"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// FuzzLoad loads arbitrary bytes, and mutations of a valid checkpoint,
// into a model's machine: the result is an error or a valid load, never a
// panic; memory allocated stays within a bound proportional to the file's
// size, whatever its header claims; and a failed load leaves the model
// unchanged.
func FuzzLoad(f *testing.F) {
	m, state := fuzzModel(f)
	var valid bytes.Buffer
	if err := Save(&valid, m, state); err != nil {
		f.Fatal(err)
	}
	file := valid.Bytes()
	header := int(binary.LittleEndian.Uint64(file))
	f.Add(file)
	for _, n := range []int{0, 7, 8, 9, 8 + header/2, 8 + header, len(file) - 1} {
		f.Add(file[:n]) // truncations
	}
	huge := slices.Clone(file)
	binary.LittleEndian.PutUint64(huge, 1<<62) // a header length past the file
	f.Add(huge)
	for _, r := range [][2]string{
		{`"F64"`, `"F16"`},                           // an unsupported dtype
		{`"shape":[3,2]`, `"shape":[2,3]`},           // a transposed shape
		{`"shape":[3,2]`, `"shape":[3,4]`},           // a size mismatch
		{`"data_offsets":[0,`, `"data_offsets":[8,`}, // overlapping offsets
		{`"fc.bias"`, `"fc.weight"`},                 // a duplicate name
		{`"fc.bias"`, "\"fc.\xffbias\""},             // a name that is not UTF-8
	} {
		f.Add(bytes.Replace(file, []byte(r[0]), []byte(r[1]), 1))
	}
	before := values(f, m, state)
	f.Fuzz(func(t *testing.T, data []byte) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		alloc := ms.TotalAlloc
		err := Load(bytes.NewReader(data), m, state)
		runtime.ReadMemStats(&ms)
		if used, bound := ms.TotalAlloc-alloc, uint64(64*len(data)+1<<20); used > bound {
			t.Fatalf("loading %d bytes allocated %d, over %d", len(data), used, bound)
		}
		if err != nil {
			if after := values(t, m, state); !slices.EqualFunc(after, before, slices.Equal) {
				t.Fatalf("a failed load (%v) changed the model", err)
			}
			return
		}
		// A load that succeeds sets the model; put it back for the next input.
		if err := Load(bytes.NewReader(file), m, state); err != nil {
			t.Fatal(err)
		}
	})
}

// fuzzModel is a small linear layer on a machine.
func fuzzModel(tb testing.TB) (*vm.Machine, []Named) {
	g := graph.New()
	fc := NewLinear(g, "fc", 2, 3, true)
	x := g.Input("x", graph.Float64, 1, 2)
	p, err := compile.Compile([]*graph.Node{ops.Sum(fc.Forward(x))})
	if err != nil {
		tb.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		tb.Fatal(err)
	}
	return m, StateOf(fc)
}

// values reads every entry of state from m.
func values(tb testing.TB, m *vm.Machine, state []Named) [][]float64 {
	out := make([][]float64, len(state))
	for i, s := range state {
		v, err := m.Get(s.Node)
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = graph.Float64s(v)
	}
	return out
}
