package vm

import (
	"fmt"
	"math"

	"github.com/nabla-go/nabla/graph"
)

// checkMemory says, before New allocates anything, whether the buffers the
// machine would allocate fit its memory limit.
func (m *Machine) checkMemory() error {
	limit := m.memLimit
	if limit <= 0 {
		limit = graph.MemoryLimit()
	}
	var total, largest int64
	var largestNode *graph.Node
	add := func(n *graph.Node, t graph.Type) error {
		b, err := graph.Bytes(t.DType, t.Shape, math.MaxInt64)
		if err != nil {
			return fmt.Errorf("nabla: vm.New: node %v: %v", n, err)
		}
		if b > largest {
			largest, largestNode = b, n
		}
		if total > math.MaxInt64-b {
			total = math.MaxInt64
		} else {
			total += b
		}
		return nil
	}
	p := m.prog
	for _, s := range p.Slots() {
		if s.Kind == graph.KindConst {
			continue // the program's own tensor
		}
		if s.Kind == graph.KindParam && m.shared != nil {
			if _, ok := m.shared.prog.SlotOf(s.Node); ok {
				continue
			}
		}
		if err := add(s.Node, s.Type); err != nil {
			return err
		}
	}
	updated := map[int]bool{}
	for _, u := range p.Updates() {
		updated[u.Slot] = true
	}
	for _, u := range p.Updates() {
		if !updated[u.From] {
			continue
		}
		if err := add(p.Slots()[u.From].Node, p.Slots()[u.From].Type); err != nil { // a staging copy
			return err
		}
	}
	if total > limit {
		site := ""
		if s := largestNode.Site(); s != "" {
			site = " (built at " + s + ")"
		}
		return fmt.Errorf("nabla: vm.New: the buffers need %s, over the memory limit of %s (vm.WithMemoryLimit, graph.SetMemoryLimit); the largest, %s, holds %v%s",
			graph.FormatBytes(total), graph.FormatBytes(limit), graph.FormatBytes(largest), largestNode, site)
	}
	return nil
}
