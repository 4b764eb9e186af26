package onnx

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/ops"
)

// TestUnmarshalModelMatchesProto decodes models with unmarshalModel and
// with proto.Unmarshal and requires the same messages: PyTorch's exports,
// a model whose graph field comes twice (merged), a tensor with raw data
// twice (the last counts) and a truncated model (an error from both).
func TestUnmarshalModelMatchesProto(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "torch", "*.onnx"))
	if len(files) == 0 {
		t.Fatal("no models in testdata/torch")
	}
	var inputs [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, data)
	}
	data := inputs[0]
	// The graph twice: proto merges the two.
	extra := protowire.AppendTag(nil, modelGraphField, protowire.BytesType)
	extra = protowire.AppendBytes(extra, protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), []byte("second")))
	inputs = append(inputs, append(append([]byte(nil), data...), extra...))
	// An initializer with raw data twice.
	tensor := protowire.AppendBytes(protowire.AppendTag(nil, tensorRawDataField, protowire.BytesType), []byte{1, 2, 3, 4})
	tensor = protowire.AppendBytes(protowire.AppendTag(tensor, tensorRawDataField, protowire.BytesType), []byte{5, 6, 7, 8})
	g := protowire.AppendBytes(protowire.AppendTag(nil, graphInitializerField, protowire.BytesType), tensor)
	inputs = append(inputs, protowire.AppendBytes(protowire.AppendTag(nil, modelGraphField, protowire.BytesType), g))
	for i, data := range inputs {
		want := &onnxpb.ModelProto{}
		if err := proto.Unmarshal(data, want); err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		got, err := unmarshalModel(data)
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		if !proto.Equal(got, want) {
			t.Errorf("input %d: unmarshalModel and proto.Unmarshal differ", i)
		}
	}
	if _, err := unmarshalModel(data[:len(data)-3]); err == nil {
		t.Error("a truncated model decoded without an error")
	}
}

// bigModel exports x·w for a 1024×1024 float64 w (8 MB of weights) and
// returns the model's bytes and w's values.
func bigModel(t *testing.T) (data []byte, vals []float64) {
	t.Helper()
	g := graph.New()
	const n = 1024
	vals = make([]float64, n*n)
	for i := range vals {
		vals[i] = float64(i%1000) / 7
	}
	w0, _ := graph.FromFloat64s(graph.Float64, vals, n, n)
	x := g.Input("x", graph.Float64, 1, n)
	w := g.Param("w", w0)
	data, err := Export([]*graph.Node{ops.MatMul(x, w)}, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return data, vals
}

// importAllocs runs imp and returns the model and the bytes it allocated
// over the weights' bytes.
func importAllocs(t *testing.T, weights int, imp func() (*Model, error)) (*Model, float64) {
	t.Helper()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m, err := imp()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	return m, float64(after.TotalAlloc-before.TotalAlloc) / float64(weights)
}

// checkParam requires the parameter w of m to hold want.
func checkParam(t *testing.T, m *Model, want []float64) {
	t.Helper()
	got := m.Params["w"].Value().Float64s()
	for i, v := range want {
		if got[i] != v {
			t.Fatalf("w[%d] = %v, want %v", i, got[i], v)
		}
	}
}

// TestImportCopiesWeightsOnce imports a model of 8 MB of weights from
// memory and requires Import to allocate at most 1.2 times that (it used
// to copy the weights three times: proto.Unmarshal's copy, the decoded
// tensor and the parameter's), and the parameters not to change when the
// caller reuses the model's bytes.
func TestImportCopiesWeightsOnce(t *testing.T) {
	data, vals := bigModel(t)
	m, ratio := importAllocs(t, 8*len(vals), func() (*Model, error) { return Import(data, Options{}) })
	if ratio > 1.2 {
		t.Errorf("Import allocated %.2f times the weights' bytes, want at most 1.2", ratio)
	}
	for i := range data {
		data[i] = 0xff
	}
	checkParam(t, m, vals)
}

// TestImportFileCopiesWeightsOnce does the same for ImportFile, which
// used to read the whole file into memory before the graph copied the
// weights (2 times the weights' bytes), and requires the parameters to
// keep their values once the file is overwritten and removed.
func TestImportFileCopiesWeightsOnce(t *testing.T) {
	data, vals := bigModel(t)
	path := filepath.Join(t.TempDir(), "big.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m, ratio := importAllocs(t, 8*len(vals), func() (*Model, error) { return ImportFile(path, Options{}) })
	if ratio > 1.2 {
		t.Errorf("ImportFile allocated %.2f times the weights' bytes, want at most 1.2", ratio)
	}
	for i := range data {
		data[i] = 0xff
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	checkParam(t, m, vals)
}

// TestImportFileTruncated maps a model file, truncates it and imports the
// mapping: reading the vanished pages is ImportFile's error naming the
// file, not a crash (where the file is read rather than mapped, the bytes
// stay valid and the import succeeds).
func TestImportFileTruncated(t *testing.T) {
	data, vals := bigModel(t)
	path := filepath.Join(t.TempDir(), "big.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mapped, release, err := readModelFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	m, err := importFileData(mapped, path, Options{}, "")
	if err == nil {
		checkParam(t, m, vals)
		t.Skip("the file was read, not mapped: nothing vanished")
	}
	if want := path + ": the file changed while it was read (a page of it could not be read)"; !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error containing %q", err, want)
	}
}
