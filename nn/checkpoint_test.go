package nn

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// setup is a small float32 model with parameters and buffers, trained by
// Adam: the model and optimiser state of a real checkpoint.
type setup struct {
	model *Sequential
	opt   *Adam
	m     *vm.Machine
	x, y  *graph.Node
	loss  *graph.Node
	feeds vm.Feeds
}

func newSetup(t *testing.T, seed uint64) *setup {
	t.Helper()
	g := graph.New()
	rng := rand.New(rand.NewPCG(seed, seed))
	f32 := WithDType(graph.Float32)
	s := &setup{model: NewSequential("model",
		NewLinear(g, "fc1", 3, 4, true, WithRand(rng), f32),
		Tanh{},
		NewDropout(g, "drop", 0.5, WithRand(rng)),
		NewLayerNorm(g, "ln", 4, 1e-5, f32),
		NewLinear(g, "fc2", 4, 2, false, WithRand(rng), f32),
	)}
	s.x = g.Input("x", graph.Float32, 5, 3)
	s.y = g.Input("y", graph.Float32, 5)
	s.loss = CrossEntropy(s.model.Forward(s.x), s.y)
	s.opt = NewAdam(DefaultAdam().WithLR(0.01))
	updates, err := TrainingUpdates(s.opt, s.loss, s.model)
	require.NoError(t, err)
	s.m = machine(t, []*graph.Node{s.loss}, updates)
	x := graph.NewDense(graph.Float32, 5, 3)
	require.NoError(t, Normal(0, 1)(rand.New(rand.NewPCG(9, 9)), x, 1, 1))
	y, err := graph.FromFloat64s(graph.Float32, []float64{0, 1, 1, 0, 1}, 5)
	require.NoError(t, err)
	s.feeds = vm.Feeds{s.x: x, s.y: y}
	return s
}

func (s *setup) state() []Named {
	return append(StateOf(s.model), Prefix("optimizer", s.opt.State())...)
}

// snapshot copies every state value the machine holds, by name.
func (s *setup) snapshot(t *testing.T) map[string]*tensor.Dense {
	t.Helper()
	out := map[string]*tensor.Dense{}
	for _, n := range s.state() {
		v, err := s.m.Get(n.Node)
		require.NoError(t, err)
		out[n.Name] = v
	}
	return out
}

func (s *setup) save(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Save(&buf, s.m, s.state()))
	return buf.Bytes()
}

func TestCheckpointRoundTrip(t *testing.T) {
	a := newSetup(t, 1)
	for range 3 {
		require.NoError(t, a.m.Run(a.feeds))
	}
	file := a.save(t)

	// The same model, rebuilt (dropout's seed is part of its construction),
	// but untrained.
	b := newSetup(t, 1)
	require.NotEqual(t, a.snapshot(t)["fc1.weight"].Data(), b.snapshot(t)["fc1.weight"].Data())
	require.NoError(t, Load(bytes.NewReader(file), b.m, b.state()))
	want, got := a.snapshot(t), b.snapshot(t)
	require.Len(t, got, 18) // 5 parameters, the dropout step, Adam's learning rate, step and 2 moments per parameter
	for name, w := range want {
		require.Equal(t, w.Float32s(), got[name].Float32s(), "%s is loaded bit for bit", name)
	}
	require.Equal(t, float32(3), got["optimizer.step"].Float32s()[0])
	require.Equal(t, 3.0, got["drop.step"].Float64s()[0])

	// Both machines now continue identically, dropout masks included.
	for range 2 {
		require.NoError(t, a.m.Run(a.feeds))
		require.NoError(t, b.m.Run(b.feeds))
		require.Equal(t, value(t, a.m, a.loss), value(t, b.m, b.loss))
	}
}

func TestStrictLoadListsDifferences(t *testing.T) {
	g := graph.New()
	param := func(name string, shape ...int) Named {
		return Named{Name: name, Node: g.Param(name, graph.NewDense(graph.Float64, shape...))}
	}
	saved := []Named{param("a", 2), param("b", 3), param("c", 2), param("e", 1)}
	var file bytes.Buffer
	m := machine(t, nil, updatesOf(saved))
	require.NoError(t, Save(&file, m, saved))

	h := graph.New()
	target := func(name string, dtype tensor.Dtype, shape ...int) Named {
		v, err := graph.FromFloat64s(dtype, make([]float64, graph.ShapeSize(shape)), shape...)
		require.NoError(t, err)
		graph.SetFloat(v, 0, 7)
		return Named{Name: name, Node: h.Param(name, v)}
	}
	state := []Named{target("a", graph.Float64, 2), target("b", graph.Float64, 4), target("d", graph.Float64, 1), target("e", graph.Float32, 1)}
	tm := machine(t, nil, updatesOf(state))
	before := snapshotOf(t, tm, state)

	err := Load(bytes.NewReader(file.Bytes()), tm, state)
	var le *LoadError
	require.True(t, errors.As(err, &le), "got %v", err)
	require.Equal(t, []string{"d"}, le.Missing)
	require.Equal(t, []string{"c"}, le.Unexpected)
	require.Equal(t, []Mismatch{
		{Name: "b", Want: graph.TypeOf(graph.Float64, 4), Got: graph.TypeOf(graph.Float64, 3)},
		{Name: "e", Want: graph.TypeOf(graph.Float32, 1), Got: graph.TypeOf(graph.Float64, 1)},
	}, le.Mismatched)
	require.EqualError(t, err, "nn: Load: checkpoint does not match (nothing loaded): missing d; unexpected c; "+
		"b is float64(3) in the file, want float64(4); e is float64(1) in the file, want float32(1)")
	require.Equal(t, before, snapshotOf(t, tm, state), "a failed load changes nothing, not even the matching a")

	// NonStrict forgives missing and unexpected names, not mismatches.
	err = Load(bytes.NewReader(file.Bytes()), tm, state, NonStrict())
	require.True(t, errors.As(err, &le))
	require.Empty(t, le.Missing)
	require.Empty(t, le.Unexpected)
	require.Len(t, le.Mismatched, 2)

	require.NoError(t, Load(bytes.NewReader(file.Bytes()), tm, []Named{state[0], state[2]}, NonStrict()))
	after := snapshotOf(t, tm, state)
	require.Equal(t, []float64{0, 0}, graph.Float64s(after["a"]), "a is loaded from the file")
	require.Equal(t, before["d"], after["d"], "d, missing from the file, keeps its value")
}

// updatesOf makes a program that holds the given parameters: each is
// updated to itself.
func updatesOf(state []Named) map[*graph.Node]*graph.Node {
	u := map[*graph.Node]*graph.Node{}
	for _, s := range state {
		u[s.Node] = ops.Identity(s.Node)
	}
	return u
}

func snapshotOf(t *testing.T, store ParamStore, state []Named) map[string]*tensor.Dense {
	t.Helper()
	out := map[string]*tensor.Dense{}
	for _, s := range state {
		v, err := store.Get(s.Node)
		require.NoError(t, err)
		out[s.Name] = v
	}
	return out
}

func TestCorruptCheckpointChangesNothing(t *testing.T) {
	a := newSetup(t, 1)
	require.NoError(t, a.m.Run(a.feeds))
	file := a.save(t)
	b := newSetup(t, 2)
	before := b.snapshot(t)
	load := func(data []byte) error { return Load(bytes.NewReader(data), b.m, b.state()) }

	for n := range len(file) {
		require.Error(t, load(file[:n]), "a file truncated to %d of %d bytes", n, len(file))
	}
	header := bytes.Clone(file)
	header[9] = '[' // the header's JSON no longer opens an object
	require.Error(t, load(header))
	data := bytes.Clone(file)
	data[len(data)-3] ^= 0x40 // a flipped bit in the last tensor's data
	require.ErrorContains(t, load(data), "checksum")
	require.Equal(t, before, b.snapshot(t))
	require.NoError(t, load(file))
	require.NotEqual(t, before, b.snapshot(t))
}

func TestLoadChecksStoreBeforeWriting(t *testing.T) {
	a := newSetup(t, 1)
	file := a.save(t)
	// An evaluation program has no dropout step and no optimiser state.
	SetTraining(a.model, false)
	logits := a.model.Forward(a.x)
	prog, err := compile.Compile([]*graph.Node{logits})
	require.NoError(t, err)
	eval, err := vm.New(prog)
	require.NoError(t, err)
	before := snapshotOf(t, eval, NamedParameters(a.model))
	err = Load(bytes.NewReader(file), eval, a.state())
	require.ErrorContains(t, err, `"drop.step"`)
	require.Equal(t, before, snapshotOf(t, eval, NamedParameters(a.model)))
	// Loading just the parameters works.
	require.NoError(t, Load(bytes.NewReader(file), eval, NamedParameters(a.model), NonStrict()))
}

func TestSaveErrors(t *testing.T) {
	a := newSetup(t, 1)
	var buf bytes.Buffer
	p := NamedParameters(a.model)
	require.ErrorContains(t, Save(&buf, a.m, []Named{p[0], {Name: p[0].Name, Node: p[1].Node}}), "appears twice")
	require.ErrorContains(t, Save(&buf, a.m, []Named{{Name: "", Node: p[0].Node}}), "no name")
	require.ErrorContains(t, Save(&buf, a.m, []Named{{Name: "x", Node: a.x}}), "not a parameter")
	require.ErrorContains(t, Load(&buf, a.m, []Named{{Name: "x", Node: nil}}), "not a parameter")
}

// Save and Load with a nil writer, reader or store say so.
func TestCheckpointNilArguments(t *testing.T) {
	require.ErrorContains(t, Save(nil, nil, nil), "must not be nil")
	require.ErrorContains(t, Load(nil, nil, nil), "must not be nil")
}

// failingStore is a ParamStore whose Sets fail from the failAt-th on
// (counting from 1), and, if restoreFails, the Sets after that too.
type failingStore struct {
	ParamStore
	sets, failAt int
	restoreFails bool
}

func (f *failingStore) Set(p *graph.Node, v *tensor.Dense) error {
	f.sets++
	if f.sets == f.failAt || (f.restoreFails && f.sets > f.failAt) {
		return errors.New("the device is gone")
	}
	return f.ParamStore.Set(p, v)
}

// A write that fails during Load puts back what was already written: the
// first parameter, written before the second failed, keeps its value.
func TestLoadIsAllOrNothing(t *testing.T) {
	a := newSetup(t, 1)
	require.NoError(t, a.m.Run(a.feeds))
	file := a.save(t)
	b := newSetup(t, 2)
	state := b.state()
	before := b.snapshot(t)
	require.NotEqual(t, a.snapshot(t)[state[0].Name].Data(), before[state[0].Name].Data(), "the file holds another first parameter")

	err := Load(bytes.NewReader(file), &failingStore{ParamStore: b.m, failAt: 2}, state)
	require.Equal(t, before[state[0].Name].Data(), b.snapshot(t)[state[0].Name].Data(), "the first parameter is unchanged")
	require.Equal(t, before, b.snapshot(t))
	require.EqualError(t, err, `nn: Load: "`+state[1].Name+`": the device is gone (nothing loaded: the entries written before it were restored)`)

	err = Load(bytes.NewReader(file), &failingStore{ParamStore: b.m, failAt: 3, restoreFails: true}, state)
	require.EqualError(t, err, `nn: Load: "`+state[2].Name+`": the device is gone; restoring "`+state[1].Name+
		`" failed too (the device is gone): the store is partly loaded`)

	require.NoError(t, Load(bytes.NewReader(file), &failingStore{ParamStore: b.m}, state))
	require.Equal(t, a.snapshot(t), b.snapshot(t))
}

// emptyStore is a ParamStore whose Get returns value and no error.
type emptyStore struct {
	ParamStore
	value *tensor.Dense
}

func (e emptyStore) Get(*graph.Node) (*tensor.Dense, error) { return e.value, nil }

// A store returning no value makes Save fail, naming the entry.
func TestSaveOfAnEmptyValue(t *testing.T) {
	a := newSetup(t, 1)
	p := NamedParameters(a.model)[:1]
	for _, v := range []*tensor.Dense{nil, {}} {
		var buf bytes.Buffer
		require.EqualError(t, Save(&buf, emptyStore{a.m, v}, p),
			`nn: Save: "`+p[0].Name+`": the store returned no value (a nil or zero tensor.Dense) and no error`)
	}
}
