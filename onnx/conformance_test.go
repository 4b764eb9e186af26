package onnx_test

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/onnx"
	"github.com/nabla-go/nabla/onnx/onnxpb"
	"github.com/nabla-go/nabla/vm"
	"google.golang.org/protobuf/proto"
	"gorgonia.org/tensor"
)

var update = flag.Bool("update", false, "rewrite CONFORMANCE.md from the conformance run")

// testData is where Debian's libonnx-testdata puts ONNX's backend test
// data; ONNX_TESTDATA overrides it.
func testData() string {
	if d := os.Getenv("ONNX_TESTDATA"); d != "" {
		return d
	}
	return "/usr/share/libonnx-testdata/data"
}

// nodeTests holds the tests of one op each.
func nodeTests() string { return filepath.Join(testData(), "node") }

// suites are the backend test folders run: ONNX's tests of single ops,
// of PyTorch's modules and operators as its exporter writes them, and of
// small models.
var suites = []string{"node", "pytorch-converted", "pytorch-operator", "simple"}

// outcome is one backend test's result.
type outcome struct {
	suite, name, status, why string // status: pass, fail or unsupported
	ops                      []string
}

// TestConformance runs every ONNX backend node test whose ops Import
// supports and compares each output with the expected one, at ONNX's
// backend tolerances (rtol 1e-3, atol 1e-7). A wrong value, or a run that
// fails, among supported ops fails the test; ops, dtypes and settings
// Import refuses are counted as unsupported. With -update it rewrites
// CONFORMANCE.md.
func TestConformance(t *testing.T) {
	if _, err := os.Stat(nodeTests()); err != nil {
		t.Skipf("ONNX backend test data not found (install Debian's libonnx-testdata): %v", err)
	}
	var results []outcome
	for _, suite := range suites {
		dirs, err := os.ReadDir(filepath.Join(testData(), suite))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dirs {
			if !d.IsDir() {
				continue
			}
			r := runBackendTest(filepath.Join(testData(), suite, d.Name()))
			r.suite, r.name = suite, suite+"/"+d.Name()
			if r.status == "fail" {
				t.Errorf("%s: %s", r.name, r.why)
			}
			results = append(results, r)
		}
	}
	table := conformanceTable(results)
	if *update {
		if err := os.WriteFile("CONFORMANCE.md", []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	// The kept table is the record: a test that stops passing, or an op
	// that stops importing, changes it and fails here.
	kept, err := os.ReadFile("CONFORMANCE.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(kept) != table {
		t.Errorf("the results differ from CONFORMANCE.md (go test ./onnx -run TestConformance -update rewrites it; git diff shows what changed)")
	}
}

// callerSite matches the " at file.go:N" an error ends with.
var callerSite = regexp.MustCompile(` at [\w.-]+\.go:\d+$`)

// runBackendTest imports, runs and checks one test folder.
func runBackendTest(dir string) (r outcome) {
	defer func() {
		if p := recover(); p != nil {
			r.status, r.why = "fail", fmt.Sprintf("panic: %v", p)
		}
	}()
	data, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return outcome{status: "fail", why: err.Error()}
	}
	m := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, m); err != nil {
		return outcome{status: "fail", why: err.Error()}
	}
	seen := map[string]bool{}
	for _, n := range m.GetGraph().GetNode() {
		if !seen[n.GetOpType()] {
			seen[n.GetOpType()] = true
			r.ops = append(r.ops, n.GetOpType())
		}
	}
	sort.Strings(r.ops)
	if u := onnx.UnsupportedOps(m); len(u) > 0 {
		r.status, r.why = "unsupported", "ops "+strings.Join(u, ", ")
		return r
	}
	set := filepath.Join(dir, "test_data_set_0")
	inputs, err := readTensors(set, "input")
	if err != nil {
		r.status, r.why = "unsupported", err.Error()
		return r
	}
	want, err := readTensors(set, "output")
	if err != nil {
		r.status, r.why = "unsupported", err.Error()
		return r
	}
	var names []string
	init := map[string]bool{}
	for _, t := range m.GetGraph().GetInitializer() {
		init[t.GetName()] = true
	}
	for _, in := range m.GetGraph().GetInput() {
		if !init[in.GetName()] {
			names = append(names, in.GetName())
		}
	}
	if len(names) != len(inputs) {
		r.status, r.why = "fail", fmt.Sprintf("%d inputs in the model, %d in the test data", len(names), len(inputs))
		return r
	}
	shapes := map[string][]int{}
	for i, name := range names {
		shapes[name] = inputs[i].Shape()
	}
	model, err := onnx.ImportProto(m, dir, onnx.Options{InputShapes: shapes})
	// Shape inputs fed as graph inputs (a Reshape's shape, a Resize's
	// scales): fix them to the test's values, first the integer and
	// one-value inputs, then every input but the first.
	for _, fix := range []func(i int) bool{
		func(i int) bool { return graph.IsInteger(inputs[i].Dtype()) || inputs[i].Shape().TotalSize() == 1 },
		func(i int) bool { return i > 0 },
	} {
		if err == nil || !strings.Contains(err.Error(), "must be known at import") {
			break
		}
		fixed := map[string]*tensor.Dense{}
		for i, name := range names {
			if fix(i) {
				fixed[name] = inputs[i]
			}
		}
		model, err = onnx.ImportProto(m, dir, onnx.Options{InputShapes: shapes, Constants: fixed})
		if model != nil {
			var kept []*tensor.Dense
			for i, name := range names {
				if fixed[name] == nil {
					kept = append(kept, inputs[i])
				}
			}
			inputs = kept
		}
	}
	if err != nil {
		r.status, r.why = "fail", err.Error()
		if strings.Contains(err.Error(), "unsupported") || strings.Contains(err.Error(), "is not supported") || strings.Contains(err.Error(), "must be known at import") {
			r.status = "unsupported"
		}
		return r
	}
	got, err := runModel(model, inputs)
	if err != nil {
		r.status, r.why = "fail", err.Error()
		return r
	}
	if len(got) != len(want) {
		r.status, r.why = "fail", fmt.Sprintf("%d outputs, want %d", len(got), len(want))
		return r
	}
	for i := range got {
		if err := closeTo(got[i], want[i], 1e-3, 1e-7); err != nil {
			r.status, r.why = "fail", fmt.Sprintf("output %d (%s): %v", i, model.OutputNames[i], err)
			return r
		}
	}
	r.status = "pass"
	return r
}

// readTensors reads prefix_0.pb, prefix_1.pb, ... from dir.
func readTensors(dir, prefix string) ([]*tensor.Dense, error) {
	var out []*tensor.Dense
	for i := 0; ; i++ {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s_%d.pb", prefix, i)))
		if os.IsNotExist(err) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		v, err := onnx.ReadTensor(data)
		if err != nil {
			return nil, fmt.Errorf("%s %d: %v", prefix, i, err)
		}
		out = append(out, v)
	}
}

// runModel compiles and runs an imported model once.
func runModel(model *onnx.Model, inputs []*tensor.Dense) ([]*tensor.Dense, error) {
	prog, err := compile.Compile(model.Outputs)
	if err != nil {
		return nil, err
	}
	m, err := vm.New(prog)
	if err != nil {
		return nil, err
	}
	feeds := vm.Feeds{}
	for i, in := range model.Inputs {
		feeds[in] = inputs[i]
	}
	if err := m.Run(feeds); err != nil {
		return nil, err
	}
	var out []*tensor.Dense
	for _, o := range model.Outputs {
		v, err := m.Value(o)
		if err != nil {
			return nil, err
		}
		c, err := graph.CloneDense(v)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// closeTo compares shapes exactly and values within atol + rtol·|want|
// (NaNs must match).
func closeTo(got, want *tensor.Dense, rtol, atol float64) error {
	gs, ws := []int(got.Shape()), []int(want.Shape())
	if graph.ShapeSize(gs) != graph.ShapeSize(ws) || (len(gs) != len(ws) && graph.ShapeSize(ws) != 1) {
		return fmt.Errorf("shape %v, want %v", gs, ws)
	}
	for i := range len(gs) {
		if len(gs) == len(ws) && gs[i] != ws[i] {
			return fmt.Errorf("shape %v, want %v", gs, ws)
		}
	}
	if got.Dtype() != want.Dtype() {
		return fmt.Errorf("dtype %v, want %v", got.Dtype(), want.Dtype())
	}
	g, w := graph.Float64s(got), graph.Float64s(want)
	for i := range w {
		if math.IsNaN(w[i]) != math.IsNaN(g[i]) || (!math.IsNaN(w[i]) && math.Abs(g[i]-w[i]) > atol+rtol*math.Abs(w[i])) {
			if !(math.IsInf(w[i], 0) && g[i] == w[i]) {
				return fmt.Errorf("element %d: got %v, want %v", i, g[i], w[i])
			}
		}
	}
	return nil
}

// conformanceTable formats the results: totals, then per op the tests
// that use it, by outcome, then the tests that are not passing and why.
func conformanceTable(results []outcome) string {
	type counts struct{ pass, fail, unsupported int }
	byOp := map[string]*counts{}
	total := counts{}
	for _, r := range results {
		for _, op := range r.ops {
			if byOp[op] == nil {
				byOp[op] = &counts{}
			}
		}
		for _, op := range r.ops {
			c := byOp[op]
			switch r.status {
			case "pass":
				c.pass++
			case "fail":
				c.fail++
			default:
				c.unsupported++
			}
		}
		switch r.status {
		case "pass":
			total.pass++
		case "fail":
			total.fail++
		default:
			total.unsupported++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# ONNX backend tests\n\n")
	fmt.Fprintf(&b, "Generated by `go test ./onnx -run TestConformance -update` from ONNX's\n")
	fmt.Fprintf(&b, "backend test data (Debian's libonnx-testdata, ONNX 1.12). Do not edit.\n\n")
	fmt.Fprintf(&b, "%d tests: %d passed, %d failed, %d unsupported.\n\n", len(results), total.pass, total.fail, total.unsupported)
	b.WriteString("| suite | passed | failed | unsupported |\n|---|---|---|---|\n")
	for _, suite := range suites {
		var c counts
		for _, r := range results {
			if r.suite == suite {
				switch r.status {
				case "pass":
					c.pass++
				case "fail":
					c.fail++
				default:
					c.unsupported++
				}
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", suite, c.pass, c.fail, c.unsupported)
	}
	b.WriteString("\nBy op (a test counts for every op it uses):\n\n")
	b.WriteString("| op | passed | failed | unsupported |\n|---|---|---|---|\n")
	ops := make([]string, 0, len(byOp))
	for op := range byOp {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		c := byOp[op]
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", op, c.pass, c.fail, c.unsupported)
	}
	b.WriteString("\n## Tests with supported ops that do not pass\n\n| test | outcome | why |\n|---|---|---|\n")
	for _, r := range results {
		if r.status != "pass" && !strings.HasPrefix(r.why, "ops ") {
			// The error's " at file:line" names this test's own line:
			// left out, so the table does not change when the test does.
			why := strings.ReplaceAll(callerSite.ReplaceAllString(r.why, ""), "|", "\\|")
			if len(why) > 200 {
				why = why[:200] + "…"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", r.name, r.status, strings.ReplaceAll(why, "\n", " "))
		}
	}
	return b.String()
}
