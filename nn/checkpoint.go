package nn

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// ParamStore holds the current values of parameters and buffers: a
// *vm.Machine is one.
type ParamStore interface {
	// Get returns a copy of a parameter's value.
	Get(param *graph.Node) (*tensor.Dense, error)
	// Set copies value into a parameter.
	Set(param *graph.Node, value *tensor.Dense) error
}

// Save writes the current values in store of every entry of state (say
// append(StateOf(model), Prefix("optimizer", opt.State())...)) to w as a
// safetensors file, under the entries' names. The file's metadata holds a
// checksum of the tensors, which Load verifies: safetensors itself has
// none, so a flipped bit in the data would otherwise go unnoticed.
func Save(w io.Writer, store ParamStore, state []Named) error {
	if w == nil || store == nil {
		return fmt.Errorf("nn: Save: the writer and the store must not be nil")
	}
	if err := checkNames(state); err != nil {
		return err
	}
	tensors := make(map[string]*tensor.Dense, len(state))
	for _, s := range state {
		v, err := store.Get(s.Node)
		if err != nil {
			return fmt.Errorf("nn: Save: %q: %w", s.Name, err)
		}
		if v == nil || v.Dtype().Type == nil {
			return fmt.Errorf("nn: Save: %q: the store returned no value (a nil or zero tensor.Dense) and no error", s.Name)
		}
		tensors[s.Name] = v
	}
	metadata := map[string]string{checksumKey: checksum(tensors)}
	if err := WriteSafetensors(w, tensors, metadata); err != nil {
		return fmt.Errorf("nn: Save: %w", err)
	}
	return nil
}

// LoadOption configures Load.
type LoadOption func(*loadConfig)

type loadConfig struct{ lenient bool }

// NonStrict lets Load skip entries of state that the file lacks and
// tensors of the file that state does not name. Tensors whose dtype or
// shape differ are an error all the same.
func NonStrict() LoadOption { return func(c *loadConfig) { c.lenient = true } }

// Load reads a safetensors file from r and sets each entry of state in
// store to the tensor of the same name. By default it is strict: the file
// must hold exactly the names of state, each with its node's dtype and
// shape; otherwise it returns a *LoadError listing every difference. Two
// conversions change no value and are made: half-precision floats (F16,
// BF16, as PyTorch saves weights) load into float32 and float64 nodes, and
// integers (PyTorch's integer buffers, such as BatchNorm's
// num_batches_tracked) into float nodes that hold each value exactly.
//
// Everything is read and checked before anything is written, so a
// corrupt, truncated or mismatched file leaves store unchanged; should a
// write still fail, the entries already written get their previous values
// back (Load keeps a copy of them meanwhile), so that store is loaded
// entirely or not at all. A file
// written by Save must match its checksum; files from other tools, which
// have none, are read as they are.
func Load(r io.Reader, store ParamStore, state []Named, opts ...LoadOption) error {
	if r == nil || store == nil {
		return fmt.Errorf("nn: Load: the reader and the store must not be nil")
	}
	var cfg loadConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if err := checkNames(state); err != nil {
		return err
	}
	tensors, metadata, fileDTypes, err := readSafetensors(r)
	if err != nil {
		return fmt.Errorf("nn: Load: %w", err)
	}
	if sum, ok := metadata[checksumKey]; ok && sum != checksum(tensors) {
		return fmt.Errorf("nn: Load: the tensors do not match the file's checksum: the file is corrupt")
	}
	var le LoadError
	want := map[string]bool{}
	var sets []Named
	for _, s := range state {
		want[s.Name] = true
		t, ok := tensors[s.Name]
		switch {
		case !ok:
			le.Missing = append(le.Missing, s.Name)
		case t.Dtype() != s.Node.DType() || !slices.Equal([]int(t.Shape()), s.Node.Shape()):
			c, detail := convertLoaded(t, fileDTypes[s.Name], s.Node.Type())
			if c == nil {
				le.Mismatched = append(le.Mismatched, Mismatch{
					Name:   s.Name,
					Want:   s.Node.Type(),
					Got:    graph.TypeOf(t.Dtype(), t.Shape()...),
					Detail: detail,
				})
				continue
			}
			tensors[s.Name] = c
			sets = append(sets, s)
		default:
			sets = append(sets, s)
		}
	}
	for name := range tensors {
		if !want[name] {
			le.Unexpected = append(le.Unexpected, name)
		}
	}
	slices.Sort(le.Unexpected)
	if cfg.lenient {
		le.Missing, le.Unexpected = nil, nil // forgiven: only mismatches fail
	}
	if len(le.Missing)+len(le.Unexpected)+len(le.Mismatched) > 0 {
		return &le
	}
	// Every target must be in the store before the first is written; its
	// value is kept to put back should a later write fail.
	previous := make([]*tensor.Dense, len(sets))
	for i, s := range sets {
		v, err := store.Get(s.Node)
		if err != nil {
			return fmt.Errorf("nn: Load: %q: %w (nothing loaded)", s.Name, err)
		}
		previous[i] = v
	}
	for i, s := range sets {
		if err := store.Set(s.Node, tensors[s.Name]); err != nil {
			return restore(store, sets[:i], previous, fmt.Errorf("nn: Load: %q: %w", s.Name, err))
		}
	}
	return nil
}

// restore puts back the previous values of the entries Load wrote before
// a write failed with err, last first (so that a node listed twice ends
// with its first value), and returns err saying whether it could.
func restore(store ParamStore, written []Named, previous []*tensor.Dense, err error) error {
	for i := len(written) - 1; i >= 0; i-- {
		if e := store.Set(written[i].Node, previous[i]); e != nil {
			return fmt.Errorf("%w; restoring %q failed too (%v): the store is partly loaded", err, written[i].Name, e)
		}
	}
	if len(written) == 0 {
		return fmt.Errorf("%w (nothing loaded)", err)
	}
	return fmt.Errorf("%w (nothing loaded: the entries written before it were restored)", err)
}

// checksumKey names the metadata entry holding Save's checksum.
const checksumKey = "nabla.crc32c"

// checksum is the CRC-32C of the tensors' names, dtypes, shapes and values
// in sorted name order, in hexadecimal.
func checksum(tensors map[string]*tensor.Dense) string {
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	var buf [8]byte
	for _, name := range slices.Sorted(maps.Keys(tensors)) {
		t := tensors[name]
		fmt.Fprintf(h, "%q %v %v;", name, t.Dtype(), []int(t.Shape()))
		for _, v := range graph.Float64s(t) {
			binary.LittleEndian.PutUint64(buf[:], math.Float64bits(v))
			h.Write(buf[:])
		}
	}
	return strconv.FormatUint(uint64(h.Sum32()), 16)
}

// checkNames rejects a state list with an empty or repeated name, or a node
// that is not a parameter.
func checkNames(state []Named) error {
	seen := map[string]bool{}
	for _, s := range state {
		switch {
		case s.Name == "":
			return fmt.Errorf("nn: checkpoint entry %v has no name", s.Node)
		case seen[s.Name]:
			return fmt.Errorf("nn: checkpoint name %q appears twice", s.Name)
		case s.Node == nil || s.Node.Err() != nil || s.Node.Kind() != graph.KindParam:
			return fmt.Errorf("nn: checkpoint entry %q is not a parameter or buffer", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// Mismatch is a checkpoint tensor whose dtype or shape differs from the
// node it would be loaded into.
type Mismatch struct {
	Name      string
	Want, Got graph.Type
	Detail    string // why a conversion failed, or ""
}

// LoadError lists how a checkpoint differs from the state it was loaded
// into. Nothing was loaded.
type LoadError struct {
	Missing    []string   // in the state, not in the file
	Unexpected []string   // in the file, not in the state
	Mismatched []Mismatch // in both, with another dtype or shape
}

// Error lists the differences on one line.
func (e *LoadError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, "missing "+strings.Join(e.Missing, ", "))
	}
	if len(e.Unexpected) > 0 {
		parts = append(parts, "unexpected "+strings.Join(e.Unexpected, ", "))
	}
	for _, m := range e.Mismatched {
		part := fmt.Sprintf("%s is %v in the file, want %v", m.Name, m.Got, m.Want)
		if m.Detail != "" {
			part += " (" + m.Detail + ")"
		}
		parts = append(parts, part)
	}
	return "nn: Load: checkpoint does not match (nothing loaded): " + strings.Join(parts, "; ")
}
