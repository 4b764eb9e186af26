package nn

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unicode/utf8"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/internal/testkit/fuzztest"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// FuzzCheckpoint saves random states (any names, float32 and float64
// values of any bits: NaNs with payloads, signed zeros, subnormals,
// infinities; empty and scalar shapes) from one machine and loads them
// into another of the same parameters: Save refuses a state only for its
// names (empty, twice, not UTF-8), a file Save writes always loads, and
// every value comes back bit for bit.
func FuzzCheckpoint(f *testing.F) {
	for _, seed := range [][]byte{
		{2, 2, 'f', 'c', 1, 2, 3, 2, 1, 'b', 0, 1, 4},
		{3, 1, 'a', 0, 0, 1, '"', 1, 2, 1, 0, 1, '\\', 0, 3, 1, 1, 1},
		{1, 3, 0xff, 'x', 0xfe, 1, 2, 2, 0},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzztest.NewBytes(data)
		rng := rand.New(rand.NewPCG(in.Seed(), 5))
		type entry struct {
			name  string
			value *tensor.Dense
		}
		entries := make([]entry, in.IntN(5))
		for i := range entries {
			name := make([]byte, in.IntN(6))
			for j := range name {
				name[j] = in.Byte()
			}
			entries[i] = entry{string(name), randomBits(rng, in.IntN(2) == 0, in.Shape(4, 3))}
		}
		// machine makes a machine of parameters named as entries, holding
		// value(i).
		machine := func(value func(i int) *tensor.Dense) (*vm.Machine, []Named) {
			g := graph.New()
			var state []Named
			var outs []*graph.Node
			for i, e := range entries {
				p := g.Param(e.name, value(i))
				state = append(state, Named{e.name, p})
				outs = append(outs, ops.Sum(p))
			}
			if len(outs) == 0 {
				outs = append(outs, g.Scalar(0, graph.Float64))
			}
			p, err := compile.Compile(outs)
			if err != nil {
				t.Fatal(err)
			}
			m, err := vm.New(p)
			if err != nil {
				t.Fatal(err)
			}
			return m, state
		}
		from, state := machine(func(i int) *tensor.Dense { return entries[i].value })
		defer from.Close()
		var file bytes.Buffer
		if err := Save(&file, from, state); err != nil {
			if checkNames(state) == nil && !slices.ContainsFunc(entries, func(e entry) bool { return !utf8.ValidString(e.name) }) {
				t.Fatalf("Save of a state of valid names: %v", err)
			}
			return
		}
		to, state2 := machine(func(i int) *tensor.Dense {
			v := entries[i].value
			return graph.NewDense(v.Dtype(), v.Shape()...)
		})
		defer to.Close()
		if err := Load(bytes.NewReader(file.Bytes()), to, state2); err != nil {
			t.Fatalf("Load of what Save wrote: %v", err)
		}
		for i, e := range entries {
			got, err := to.Get(state2[i].Node)
			if err != nil {
				t.Fatal(err)
			}
			if !sameBitsAndType(got, e.value) {
				t.Fatalf("entry %q: loaded %v%v %v, saved %v%v %v", e.name, got.Dtype(), got.Shape(), got.Data(), e.value.Dtype(), e.value.Shape(), e.value.Data())
			}
		}
	})
}

// randomBits is a float64 (or float32) tensor of shape whose elements are
// random bit patterns, or now and then a signed zero or an infinity.
func randomBits(rng *rand.Rand, wide bool, shape []int) *tensor.Dense {
	n := graph.ShapeSize(shape)
	pick := func(bits uint64, special float64) uint64 {
		if rng.IntN(4) == 0 {
			return math.Float64bits(special)
		}
		return bits
	}
	specials := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN()}
	if wide {
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Float64frombits(pick(rng.Uint64(), specials[rng.IntN(len(specials))]))
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
	}
	v := make([]float32, n)
	for i := range v {
		bits := uint32(rng.Uint64())
		if rng.IntN(4) == 0 {
			bits = math.Float32bits(float32(specials[rng.IntN(len(specials))]))
		}
		v[i] = math.Float32frombits(bits)
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
}

// sameBitsAndType reports whether a and b have one dtype and shape and
// the same bits.
func sameBitsAndType(a, b *tensor.Dense) bool {
	if a.Dtype() != b.Dtype() || !graph.TypeOf(a.Dtype(), a.Shape()...).Equal(graph.TypeOf(b.Dtype(), b.Shape()...)) {
		return false
	}
	switch x := a.Data().(type) {
	case []float64:
		y := b.Data().([]float64)
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
				return false
			}
		}
	case []float32:
		y := b.Data().([]float32)
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				return false
			}
		}
	}
	return true
}
