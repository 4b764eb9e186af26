package onnx

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/nabla-go/nabla/onnx/onnxpb"
)

// A model's structure, checked before anything is built: its opset, the
// order its nodes are built in, and the ops Import supports.

// defaultOpset returns the opset of the default domain, refusing one too
// new to know.
func defaultOpset(m *onnxpb.ModelProto) (int64, error) {
	for _, o := range m.GetOpsetImport() {
		if d := o.GetDomain(); d == "" || d == "ai.onnx" {
			v := o.GetVersion()
			if v > MaxOpset {
				return 0, fmt.Errorf("opset %d is newer than the newest supported, %d", v, MaxOpset)
			}
			if v < 1 {
				return 0, fmt.Errorf("opset %d is not valid", v)
			}
			return v, nil
		}
	}
	return 0, errors.New("the model imports no opset of the default domain")
}

// sortNodes orders the graph's nodes so that each comes after the nodes
// producing its inputs (ONNX asks for that order, but not every exporter
// keeps it), refusing duplicate producers, dangling inputs and cycles.
// outer tells, in a subgraph, the names the enclosing graphs define (nil
// for the main graph).
func sortNodes(gp *onnxpb.GraphProto, outer func(name string) bool) ([]*onnxpb.NodeProto, error) {
	defined := map[string]string{} // value name → what defines it
	define := func(name, by string) error {
		if name == "" {
			return nil
		}
		if prev, ok := defined[name]; ok {
			return fmt.Errorf("value %q is defined twice: by %s and by %s", name, prev, by)
		}
		defined[name] = by
		return nil
	}
	for _, t := range gp.GetInitializer() {
		if err := define(t.GetName(), "an initializer"); err != nil {
			return nil, err
		}
	}
	for _, in := range gp.GetInput() {
		if _, ok := defined[in.GetName()]; ok {
			continue // an input with a default value (older IR versions)
		}
		if err := define(in.GetName(), "a graph input"); err != nil {
			return nil, err
		}
	}
	producer := map[string]int{}
	for i, n := range gp.GetNode() {
		for _, o := range n.GetOutput() {
			if err := define(o, "node "+nodeName(n)); err != nil {
				return nil, err
			}
			producer[o] = i
		}
	}
	nodes := gp.GetNode()
	for _, n := range nodes {
		for _, in := range n.GetInput() {
			if _, ok := defined[in]; in != "" && !ok && (outer == nil || !outer(in)) {
				return nil, fmt.Errorf("node %s: input %q is produced by no node, initializer or input", nodeName(n), in)
			}
		}
	}
	// Depth-first, from each node in file order: iterative, so that a deep
	// chain cannot exhaust the stack.
	const (
		unseen = iota
		active
		done
	)
	state := make([]uint8, len(nodes))
	order := make([]*onnxpb.NodeProto, 0, len(nodes))
	type frame struct{ node, next int }
	for root := range nodes {
		if state[root] != unseen {
			continue
		}
		stack := []frame{{root, 0}}
		state[root] = active
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			ins := nodes[f.node].GetInput()
			if f.next == len(ins) {
				state[f.node] = done
				order = append(order, nodes[f.node])
				stack = stack[:len(stack)-1]
				continue
			}
			p, ok := producer[ins[f.next]]
			f.next++
			if !ok {
				continue
			}
			switch state[p] {
			case active:
				return nil, fmt.Errorf("the nodes form a cycle through node %s", nodeName(nodes[p]))
			case unseen:
				state[p] = active
				stack = append(stack, frame{p, 0})
			}
		}
	}
	return order, nil
}

// nodeName names a node for errors: its name and op type.
func nodeName(n *onnxpb.NodeProto) string {
	if n.GetName() == "" {
		return fmt.Sprintf("%s (unnamed, output %q)", n.GetOpType(), strings.Join(n.GetOutput(), ","))
	}
	return fmt.Sprintf("%q (%s)", n.GetName(), n.GetOpType())
}

// allNodes returns a graph's nodes and those of its subgraphs (a Scan's
// body, say), depth first.
func allNodes(gp *onnxpb.GraphProto) []*onnxpb.NodeProto {
	var out []*onnxpb.NodeProto
	for _, n := range gp.GetNode() {
		out = append(out, n)
		for _, a := range n.GetAttribute() {
			for _, sub := range append([]*onnxpb.GraphProto{a.GetG()}, a.GetGraphs()...) {
				if sub != nil {
					out = append(out, allNodes(sub)...)
				}
			}
		}
	}
	return out
}

// checkSupported lists every node whose op Import cannot build, at once.
func checkSupported(nodes []*onnxpb.NodeProto, opset int64) error {
	byOp := map[string][]string{}
	for _, n := range nodes {
		op := n.GetOpType()
		if d := n.GetDomain(); d != "" && d != "ai.onnx" {
			op = d + "." + op
		} else if _, ok := importers[op]; ok {
			continue
		}
		name := n.GetName()
		if name == "" {
			name = "output " + strings.Join(n.GetOutput(), ",")
		}
		byOp[op] = append(byOp[op], fmt.Sprintf("%q", name))
	}
	if len(byOp) == 0 {
		return nil
	}
	ops := make([]string, 0, len(byOp))
	for op := range byOp {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	var parts []string
	for _, op := range ops {
		parts = append(parts, fmt.Sprintf("%s (nodes %s)", op, strings.Join(byOp[op], ", ")))
	}
	return fmt.Errorf("unsupported ops at opset %d: %s", opset, strings.Join(parts, "; "))
}

// UnsupportedOps returns the op types of a model's nodes that Import cannot
// build, sorted, each once.
func UnsupportedOps(m *onnxpb.ModelProto) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range allNodes(m.GetGraph()) {
		op := n.GetOpType()
		if d := n.GetDomain(); d != "" && d != "ai.onnx" {
			op = d + "." + op
		} else if _, ok := importers[op]; ok {
			continue
		}
		if !seen[op] {
			seen[op] = true
			out = append(out, op)
		}
	}
	sort.Strings(out)
	return out
}
