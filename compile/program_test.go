package compile_test

import (
	"testing"

	"github.com/nabla-go/nabla/compile"
)

// The methods of a nil *Program, and of a nil or zero Instruction, return
// zero values rather than panic.
func TestNilProgram(t *testing.T) {
	var p *compile.Program
	var in *compile.Instruction
	if s, ok := p.SlotOf(nil); ok || s != 0 {
		t.Errorf("SlotOf: got %d, %v, want 0, false", s, ok)
	}
	if p.Graph() != nil || p.Instructions() != nil || p.Slots() != nil || p.SlotNodes(0) != nil ||
		p.Inputs() != nil || p.Outputs() != nil || p.Params() != nil || p.Updates() != nil || p.String() != "" {
		t.Errorf("a nil program's accessors: got non-zero values")
	}
	if err := compile.WriteDot(nil, p); err == nil {
		t.Errorf("WriteDot of a nil program: got no error")
	}
	if in.Name() != "" || (&compile.Instruction{}).Name() != "" || in.Fused() != nil || in.Absorbed() != nil || in.Culprit(nil, 0) != nil {
		t.Errorf("a nil instruction's accessors: got non-zero values")
	}
}
