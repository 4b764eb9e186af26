package nn

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/nabla-go/nabla/graph"
	"gorgonia.org/tensor"
)

// The safetensors format (https://huggingface.co/docs/safetensors) is an
// 8-byte little-endian header length N, N bytes of JSON header, then the raw
// little-endian tensor data. The header maps each tensor's name to its dtype,
// shape and [begin, end) byte offsets into the data section; the optional
// "__metadata__" entry maps strings to strings.
const (
	// maxHeaderBytes bounds the header a reader accepts (the reference
	// implementation's limit), so a corrupt length cannot make it read or
	// allocate gigabytes before anything is checked.
	maxHeaderBytes = 100_000_000
	metadataKey    = "__metadata__"
	// chunkBytes is the size of the buffer tensor data is encoded and
	// decoded through; a multiple of every element size.
	chunkBytes = 64 << 10
)

// stDType describes one safetensors dtype that nabla reads: its name, its
// size in bytes, the dtype it is read into and whether nabla writes that
// dtype as it. Half-precision floats, which PyTorch saves and nabla does
// not compute with, are read into float32, which holds each exactly.
type stDType struct {
	name  string
	size  int64
	dtype tensor.Dtype
	write bool
}

var stDTypes = []stDType{
	{"F32", 4, graph.Float32, true},
	{"F64", 8, graph.Float64, true},
	{"I32", 4, graph.Int32, true},
	{"I64", 8, graph.Int64, true},
	{"F16", 2, graph.Float32, false},
	{"BF16", 2, graph.Float32, false},
}

// entry is one tensor of a safetensors header.
type entry struct {
	name       string
	dt         stDType
	shape      []int
	elems      int64
	begin, end int64
}

// WriteSafetensors writes tensors and metadata to w in the safetensors
// format. Tensors must be float32, float64, int32 or int64 (F32, F64, I32,
// I64); they are laid out in sorted
// name order and the header is padded with spaces to a multiple of 8 bytes,
// so the same input always gives the same bytes. An empty or nil metadata
// map writes no "__metadata__" entry. Non-contiguous views are written as
// their logical contents.
func WriteSafetensors(w io.Writer, tensors map[string]*tensor.Dense, metadata map[string]string) error {
	if w == nil {
		return errors.New("safetensors: WriteSafetensors: the writer is nil")
	}
	names := slices.Sorted(maps.Keys(tensors))
	entries := make([]entry, len(names))
	data := make([]*tensor.Dense, len(names))
	var offset int64
	for i, name := range names {
		t, e, err := prepareTensor(name, tensors[name])
		if err != nil {
			return fmt.Errorf("safetensors: tensor %q: %w", name, err)
		}
		e.begin, e.end = offset, offset+e.elems*e.dt.size
		offset = e.end
		entries[i], data[i] = e, t
	}
	header, err := encodeHeader(entries, metadata)
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	var length [8]byte
	binary.LittleEndian.PutUint64(length[:], uint64(len(header)))
	if _, err := w.Write(length[:]); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	if _, err := w.Write(header); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	buf := make([]byte, chunkBytes)
	for i, t := range data {
		if err := writeTensor(w, t, int(entries[i].elems), buf); err != nil {
			return fmt.Errorf("safetensors: writing tensor %q: %w", names[i], err)
		}
	}
	return nil
}

// prepareTensor checks t and returns a contiguous version of it with its
// header entry (offsets not yet set).
func prepareTensor(name string, t *tensor.Dense) (*tensor.Dense, entry, error) {
	switch {
	case name == metadataKey:
		return nil, entry{}, fmt.Errorf("the name %q is reserved for metadata", metadataKey)
	case !utf8.ValidString(name):
		return nil, entry{}, errors.New("name is not valid UTF-8")
	case t == nil:
		return nil, entry{}, errors.New("tensor is nil")
	case t.Dtype().Type == nil:
		return nil, entry{}, errors.New("tensor is empty (a zero tensor.Dense, with no dtype): make it with tensor.New or graph.NewDense")
	}
	i := slices.IndexFunc(stDTypes, func(d stDType) bool { return d.write && d.dtype == t.Dtype() })
	if i < 0 {
		return nil, entry{}, fmt.Errorf("dtype %v is not supported (float32, float64, int32 or int64)", t.Dtype())
	}
	if t.RequiresIterator() {
		c, err := graph.CloneDense(t)
		if err != nil {
			return nil, entry{}, err
		}
		t = c
	}
	shape := slices.Clone([]int(t.Shape()))
	elems := graph.ShapeSize(shape)
	// Not DataSize: it reports 0 for a scalar.
	if held := reflect.ValueOf(graph.Backing(t)).Len(); held < elems {
		return nil, entry{}, fmt.Errorf("holds %d values for shape %s", held, graph.ShapeString(shape))
	}
	return t, entry{name: name, dt: stDTypes[i], shape: shape, elems: int64(elems)}, nil
}

// encodeHeader builds the JSON header by hand so that key order (metadata
// first, then tensors by name) and spacing are fixed.
func encodeHeader(entries []entry, metadata map[string]string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	if len(metadata) > 0 {
		b.WriteString(`"` + metadataKey + `":{`)
		for i, k := range slices.Sorted(maps.Keys(metadata)) {
			if !utf8.ValidString(k) || !utf8.ValidString(metadata[k]) {
				return nil, fmt.Errorf("metadata %q: key or value is not valid UTF-8", k)
			}
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(&b, k)
			b.WriteByte(':')
			writeJSONString(&b, metadata[k])
		}
		b.WriteByte('}')
	}
	for i, e := range entries {
		if i > 0 || len(metadata) > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, e.name)
		b.WriteString(`:{"dtype":"` + e.dt.name + `","shape":[`)
		for j, d := range e.shape {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(d))
		}
		fmt.Fprintf(&b, `],"data_offsets":[%d,%d]}`, e.begin, e.end)
	}
	b.WriteByte('}')
	for b.Len()%8 != 0 {
		b.WriteByte(' ')
	}
	return b.Bytes(), nil
}

// writeJSONString writes s as a JSON string; s is valid UTF-8, so Marshal
// cannot fail or alter it.
func writeJSONString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s)
	b.Write(q)
}

// ReadSafetensors reads a safetensors file holding F32, F64, I32 and I64
// tensors, and F16 and BF16 ones, which it reads into float32 (exactly:
// float32 holds every half-precision value), and returns them by name with
// the file's metadata (nil when it has none).
// It checks the whole file and returns an error naming the offending
// tensor for an oversized or truncated header, invalid JSON, duplicate
// names, an unsupported dtype, a negative dimension, data offsets that do
// not match the shape, overlap, leave holes or run past the data, and data
// left over after the last tensor. Memory use is bounded by the bytes
// actually present, whatever the header claims.
func ReadSafetensors(r io.Reader) (map[string]*tensor.Dense, map[string]string, error) {
	tensors, metadata, _, err := readSafetensors(r)
	return tensors, metadata, err
}

// readSafetensors is ReadSafetensors, also returning each tensor's dtype
// as the file names it ("BF16", say).
func readSafetensors(r io.Reader) (tensors map[string]*tensor.Dense, metadata, fileDTypes map[string]string, err error) {
	if r == nil {
		return nil, nil, nil, errors.New("safetensors: ReadSafetensors: the reader is nil")
	}
	var length [8]byte
	if _, err := io.ReadFull(r, length[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, nil, nil, errors.New("safetensors: file is shorter than its 8-byte header length")
		}
		return nil, nil, nil, fmt.Errorf("safetensors: reading the header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(length[:])
	if n > maxHeaderBytes {
		return nil, nil, nil, fmt.Errorf("safetensors: header length %d exceeds the limit of %d bytes", n, maxHeaderBytes)
	}
	header, err := io.ReadAll(io.LimitReader(r, int64(n)))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("safetensors: reading the header: %w", err)
	}
	if uint64(len(header)) < n {
		return nil, nil, nil, fmt.Errorf("safetensors: header length %d runs past the end of the file (%d header bytes present)", n, len(header))
	}
	entries, metadata, err := parseHeader(header)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("safetensors: %w", err)
	}
	if err := checkLayout(entries); err != nil {
		return nil, nil, nil, fmt.Errorf("safetensors: %w", err)
	}
	out := make(map[string]*tensor.Dense, len(entries))
	fileDTypes = make(map[string]string, len(entries))
	buf := make([]byte, chunkBytes)
	for _, e := range entries {
		t, err := readTensor(r, e, buf)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("safetensors: tensor %q: %w", e.name, err)
		}
		out[e.name], fileDTypes[e.name] = t, e.dt.name
	}
	var end int64
	if len(entries) > 0 {
		end = entries[len(entries)-1].end
	}
	switch k, err := io.ReadFull(r, buf[:1]); {
	case k > 0:
		return nil, nil, nil, fmt.Errorf("safetensors: data continues past byte %d, where the last tensor ends", end)
	case err != nil && !errors.Is(err, io.EOF):
		return nil, nil, nil, fmt.Errorf("safetensors: %w", err)
	}
	return out, metadata, fileDTypes, nil
}

// parseHeader decodes and checks every entry of the JSON header. Entries
// come back in file order; checkLayout sorts them by offset.
func parseHeader(header []byte) ([]entry, map[string]string, error) {
	keys, values, err := decodeObject(header)
	if err != nil {
		return nil, nil, fmt.Errorf("header: %w", err)
	}
	var metadata map[string]string
	entries := make([]entry, 0, len(keys))
	for i, key := range keys {
		if key == metadataKey {
			if metadata, err = parseMetadata(values[i]); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", metadataKey, err)
			}
			continue
		}
		e, err := parseEntry(key, values[i])
		if err != nil {
			return nil, nil, fmt.Errorf("tensor %q: %w", key, err)
		}
		entries = append(entries, e)
	}
	return entries, metadata, nil
}

// decodeObject splits a JSON object into its keys and raw values, in
// order, rejecting duplicate keys (which encoding/json would silently
// resolve to the last) and anything but whitespace after the object.
func decodeObject(data []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("invalid JSON: %w", err)
	} else if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not a JSON object")
	}
	var keys []string
	var values []json.RawMessage
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("invalid JSON: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, nil, fmt.Errorf("invalid JSON: key %v is not a string", tok)
		}
		if seen[key] {
			return nil, nil, fmt.Errorf("duplicate name %q", key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("invalid JSON in %q: %w", key, err)
		}
		keys, values = append(keys, key), append(values, raw)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("invalid JSON: data after the object")
	}
	return keys, values, nil
}

func parseMetadata(raw json.RawMessage) (map[string]string, error) {
	keys, values, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	metadata := make(map[string]string, len(keys))
	for i, k := range keys {
		var v string
		if err := json.Unmarshal(values[i], &v); err != nil {
			return nil, fmt.Errorf("value of %q is not a string", k)
		}
		metadata[k] = v
	}
	return metadata, nil
}

// parseEntry checks one tensor's description. Fields other than dtype,
// shape and data_offsets are ignored, as the reference reader does.
func parseEntry(name string, raw json.RawMessage) (entry, error) {
	keys, values, err := decodeObject(raw)
	if err != nil {
		return entry{}, err
	}
	e := entry{name: name, elems: 1}
	var dtypeName *string
	var shape, offsets []int64
	for i, k := range keys {
		switch k {
		case "dtype":
			dtypeName = new(string)
			err = json.Unmarshal(values[i], dtypeName)
		case "shape":
			err = json.Unmarshal(values[i], &shape)
		case "data_offsets":
			err = json.Unmarshal(values[i], &offsets)
		default:
			continue
		}
		if err != nil {
			return entry{}, fmt.Errorf("%s: %w", k, err)
		}
	}
	switch {
	case dtypeName == nil:
		return entry{}, errors.New(`missing "dtype"`)
	case shape == nil:
		return entry{}, errors.New(`missing "shape"`)
	case offsets == nil:
		return entry{}, errors.New(`missing "data_offsets"`)
	case len(offsets) != 2:
		return entry{}, fmt.Errorf("data_offsets has %d values, want 2 (begin, end)", len(offsets))
	}
	i := slices.IndexFunc(stDTypes, func(d stDType) bool { return d.name == *dtypeName })
	if i < 0 {
		return entry{}, fmt.Errorf("dtype %q is not supported (F32, F64, F16, BF16, I32 or I64)", *dtypeName)
	}
	e.dt = stDTypes[i]
	// Both the element count and the product of the non-zero dimensions
	// must fit, or strides computed from the shape would overflow.
	limit := math.MaxInt / e.dt.size
	nonZero := int64(1)
	for _, d := range shape {
		if d < 0 {
			return entry{}, fmt.Errorf("shape %v has a negative dimension", shape)
		}
		if d > 0 {
			if nonZero > limit/d {
				return entry{}, fmt.Errorf("shape %v is too large", shape)
			}
			nonZero *= d
		}
		e.elems *= d
		e.shape = append(e.shape, int(d))
	}
	if e.shape == nil {
		e.shape = []int{}
	}
	if _, err := graph.Bytes(e.dt.dtype, e.shape, 0); err != nil {
		return entry{}, err
	}
	e.begin, e.end = offsets[0], offsets[1]
	switch want := e.elems * e.dt.size; {
	case e.begin < 0 || e.end < e.begin:
		return entry{}, fmt.Errorf("data_offsets [%d,%d] are not a valid range", e.begin, e.end)
	case e.end-e.begin != want:
		return entry{}, fmt.Errorf("data_offsets [%d,%d] span %d bytes, but %s%s needs %d",
			e.begin, e.end, e.end-e.begin, e.dt.name, graph.ShapeString(e.shape), want)
	}
	return e, nil
}

// checkLayout sorts entries by offset and checks that they tile the data
// section exactly: no overlap, no hole.
func checkLayout(entries []entry) error {
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.begin, b.begin), cmp.Compare(a.end, b.end), cmp.Compare(a.name, b.name))
	})
	var pos int64
	for i, e := range entries {
		switch {
		case e.begin < pos:
			p := entries[i-1]
			return fmt.Errorf("tensor %q: bytes [%d,%d) overlap tensor %q at [%d,%d)", e.name, e.begin, e.end, p.name, p.begin, p.end)
		case e.begin > pos:
			return fmt.Errorf("tensor %q: data starts at byte %d, leaving bytes [%d,%d) to no tensor", e.name, e.begin, pos, e.begin)
		}
		pos = e.end
	}
	return nil
}

// readTensor reads e's data, which comes next in r.
func readTensor(r io.Reader, e entry, buf []byte) (*tensor.Dense, error) {
	var backing any
	var got int64
	var err error
	n := int(e.elems)
	switch e.dt.name {
	case "F32":
		backing, got, err = readChunks(r, n, 4, buf, decodeFloat32s)
	case "F64":
		backing, got, err = readChunks(r, n, 8, buf, decodeFloat64s)
	case "I32":
		backing, got, err = readChunks(r, n, 4, buf, decodeInt32s)
	case "I64":
		backing, got, err = readChunks(r, n, 8, buf, decodeInt64s)
	case "F16":
		backing, got, err = readChunks(r, n, 2, buf, decodeFloat16s)
	default: // BF16
		backing, got, err = readChunks(r, n, 2, buf, decodeBFloat16s)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("data truncated: needs bytes [%d,%d) of the data section, which ends at byte %d", e.begin, e.end, e.begin+got)
	}
	if err != nil {
		return nil, err
	}
	return tensor.New(tensor.WithShape(e.shape...), tensor.WithBacking(backing)), nil
}

// writeChunks encodes vals through buf (size bytes per value) into w.
func writeChunks[T any](w io.Writer, vals []T, size int, buf []byte, encode func([]byte, []T)) error {
	per := len(buf) / size
	for len(vals) > 0 {
		k := min(len(vals), per)
		encode(buf, vals[:k])
		if _, err := w.Write(buf[:k*size]); err != nil {
			return err
		}
		vals = vals[k:]
	}
	return nil
}

// readChunks reads n values of size bytes from r through buf. The result
// grows as data arrives rather than being allocated from the header's
// claim, so a corrupt header cannot force a huge allocation. It returns
// the number of bytes consumed, for error messages.
func readChunks[T any](r io.Reader, n, size int, buf []byte, decode func([]T, []byte)) ([]T, int64, error) {
	per := len(buf) / size
	vals := make([]T, 0, min(n, per))
	for len(vals) < n {
		k := min(n-len(vals), per)
		m, err := io.ReadFull(r, buf[:k*size])
		if err != nil {
			return nil, int64(len(vals)*size + m), err
		}
		if len(vals)+k > cap(vals) {
			grown := make([]T, len(vals), min(max(2*cap(vals), len(vals)+k), n))
			copy(grown, vals)
			vals = grown
		}
		start := len(vals)
		vals = vals[:start+k]
		decode(vals[start:], buf)
	}
	return vals, int64(n * size), nil
}

func encodeFloat32s(dst []byte, src []float32) {
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

func encodeFloat64s(dst []byte, src []float64) {
	for i, v := range src {
		binary.LittleEndian.PutUint64(dst[8*i:], math.Float64bits(v))
	}
}

func decodeFloat32s(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func decodeFloat64s(dst []float64, src []byte) {
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:]))
	}
}
