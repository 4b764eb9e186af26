package vm

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/nabla-go/nabla/graph"
)

// checkBroadcasts refuses a replay at batch size size (nodes, from
// Replay) that would compute a wrong value silently: an op that spreads
// the batch over an axis the built batch set (spreadsBatch), or a Reshape
// that keeps the built batch (reshapeKeepsBatch), in the graph or in the
// nested graphs of its replayed ops (the bodies of Scan and While, the
// branches of Cond: traced again for the new size, they are checked
// against their graphs as built, node by node). The first such node, in
// build order, is named, and the ops whose bodies hold it.
func (r *Runner) checkBroadcasts(nodes map[*graph.Node]*graph.Node, size int) error {
	return r.checkLevel(nodes, size, nil)
}

// checkLevel checks the nodes of one graph (as built → replayed) and then,
// in build order, the bodies of those that have some; inside are the ops
// whose bodies hold the graph, innermost first, for errors (an op built
// at the line of the op holding it, as While's Cond inside its Scan, is
// not named again).
func (r *Runner) checkLevel(nodes map[*graph.Node]*graph.Node, size int, inside []*graph.Node) error {
	where := ""
	for i, n := range inside {
		if i == 0 {
			where += " (inside the "
		} else {
			where += ", inside the "
		}
		where += n.BuilderName() + " at " + n.Site()
		if i == len(inside)-1 {
			where += ")"
		}
	}
	if err := r.broadcastError(nodes, size, where); err != nil {
		return err
	}
	if err := r.reshapeError(nodes, size, where); err != nil {
		return err
	}
	var nested []*graph.Node
	for n, m := range nodes {
		if n.Outputs()[0] == n && len(subgraphs(n)) > 0 && len(subgraphs(m)) > 0 {
			nested = append(nested, n)
		}
	}
	slices.SortFunc(nested, func(a, b *graph.Node) int { return cmp.Compare(a.ID(), b.ID()) })
	for _, n := range nested {
		holders := inside
		if len(inside) == 0 || inside[0].Site() != n.Site() {
			holders = append([]*graph.Node{n}, inside...)
		}
		for _, pairs := range pairSubgraphs(subgraphs(n), subgraphs(nodes[n])) {
			if err := r.checkLevel(pairs, size, holders); err != nil {
				return err
			}
		}
	}
	return nil
}

// first is the node of nodes, in build order, for which bad holds.
func first(nodes map[*graph.Node]*graph.Node, bad func(n, m *graph.Node) bool) *graph.Node {
	var found *graph.Node
	for n, m := range nodes {
		if (found == nil || n.ID() < found.ID()) && bad(n, m) {
			found = n
		}
	}
	return found
}

// broadcastError refuses an op that broadcasts (graph.Broadcaster) and
// spreads the batch over an axis the built batch set: an input's axis
// that matched the output's as built and, its size changed with the
// batch, broadcasts against it now, the output's axis keeping its built
// size. That is a batch of one row broadcast against an operand shaped by
// the built batch (a parameter or a constant): the graph as built gives
// as many rows as the built batch, silently. Nodes not replayed op by op
// (gradients derived again) are skipped: the forward nodes they derive
// from are checked.
func (r *Runner) broadcastError(nodes map[*graph.Node]*graph.Node, size int, inside string) error {
	bad := first(nodes, func(n, m *graph.Node) bool {
		_, broadcasts := n.Op().(graph.Broadcaster)
		_, _, spreads := spreadsBatch(nodes, n, m)
		return broadcasts && spreads
	})
	if bad == nil {
		return nil
	}
	m := nodes[bad]
	input, axis, _ := spreadsBatch(nodes, bad, m)
	now, built := m.Inputs(), bad.Inputs()
	shapes := make([]string, len(now))
	for i, x := range now {
		shapes[i] = graph.ShapeString(x.Type().Shape)
	}
	was, is := built[input].Type().Shape, now[input].Type().Shape
	k := axis + m.Type().Rank() - len(is)
	return fmt.Errorf("nabla: Runner.Run: %s at %s%s: broadcasting %s gives %s (%s as built): input %d's axis %d follows the batch (%d as built, %d now) and is spread over the output's axis %d, which keeps its built size %d: "+
		"an operand holds the built batch in its shape (a parameter or constant?) (batch size %d; the graph was built for %d)",
		bad.OpName(), bad.Site(), inside, strings.Join(shapes, " and "), graph.ShapeString(m.Type().Shape), graph.ShapeString(bad.Type().Shape),
		input, axis, was[axis], is[axis], k, m.Type().Shape[k], size, r.batch)
}

// spreadsBatch reports whether node n, replayed op by op as m, has an
// input whose axis matched the output's axis aligned with it (from the
// right) as built, and no longer does, the output's axis keeping its
// size: it returns that input and axis.
func spreadsBatch(nodes map[*graph.Node]*graph.Node, n, m *graph.Node) (input, axis int, ok bool) {
	built, now := n.Inputs(), m.Inputs()
	if len(built) != len(now) {
		return 0, 0, false
	}
	for i, x := range built {
		if y, replayed := nodes[x]; (replayed && y != now[i]) || (!replayed && x != now[i]) {
			return 0, 0, false // derived again, not replayed op by op
		}
	}
	outBuilt, outNow := n.Type().Shape, m.Type().Shape
	if len(outBuilt) != len(outNow) {
		return 0, 0, false
	}
	for i := range built {
		was, is := built[i].Type().Shape, now[i].Type().Shape
		if len(was) != len(is) || len(was) > len(outBuilt) {
			continue
		}
		for j := range was {
			k := j + len(outBuilt) - len(was)
			if was[j] == outBuilt[k] && outNow[k] == outBuilt[k] && is[j] != was[j] {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

// reshapeError refuses a Reshape that bakes the built batch into its
// shape: its input's leading axis follows the batch (the built batch as
// built, size now) while its output's leading axis keeps the built
// batch, as Reshape(x, 64, -1) does at 128 rows, giving 64 rows of two
// examples each, silently.
func (r *Runner) reshapeError(nodes map[*graph.Node]*graph.Node, size int, inside string) error {
	if size == r.batch {
		return nil
	}
	bad := first(nodes, func(n, m *graph.Node) bool {
		if n.OpName() != "Reshape" || len(n.Inputs()) != 1 || len(m.Inputs()) != 1 {
			return false
		}
		was, is := n.Inputs()[0].Type().Shape, m.Inputs()[0].Type().Shape
		outWas, outIs := n.Type().Shape, m.Type().Shape
		return len(was) > 0 && len(is) > 0 && len(outWas) > 0 && len(outIs) > 0 &&
			was[0] == r.batch && is[0] == size && outWas[0] == r.batch && outIs[0] == r.batch
	})
	if bad == nil {
		return nil
	}
	m := nodes[bad]
	return fmt.Errorf("nabla: Runner.Run: Reshape at %s%s: %s to %s (%s to %s as built): the input's leading axis follows the batch and the output's keeps the built batch %d, so its rows would not be the examples': "+
		"the reshape holds the batch in its shape; give the leading axis as -1 (batch size %d; the graph was built for %d)",
		bad.Site(), inside, graph.ShapeString(m.Inputs()[0].Type().Shape), graph.ShapeString(m.Type().Shape),
		graph.ShapeString(bad.Inputs()[0].Type().Shape), graph.ShapeString(bad.Type().Shape), r.batch, size, r.batch)
}

// subgraphs are the nested graphs node n's op runs (graph.SubgraphOp),
// or nil.
func subgraphs(n *graph.Node) []*graph.Subgraph {
	var op any = n.Op()
	if op == nil {
		op, _ = n.MultiOp()
	}
	if s, ok := op.(graph.SubgraphOp); ok {
		return s.Subgraphs()
	}
	return nil
}

// pairSubgraphs maps the nodes of nested graphs as built to those of the
// same graphs traced again for other input types, a map for each graph:
// their inputs in order,
// and, from their outputs back, each node's inputs in order, as long as
// the two nodes apply ops of one name to as many inputs. A body traced
// again calls the same function, so it builds the same ops; where a
// builder chose other ops for the new shapes, pairing stops there, and
// those nodes are not checked (as gradients derived again are not).
func pairSubgraphs(built, again []*graph.Subgraph) []map[*graph.Node]*graph.Node {
	if len(built) != len(again) {
		return nil
	}
	all := make([]map[*graph.Node]*graph.Node, len(built))
	var pairs map[*graph.Node]*graph.Node
	var pair func(n, m *graph.Node)
	pair = func(n, m *graph.Node) {
		if _, done := pairs[n]; done || n == nil || m == nil || n.Kind() != m.Kind() || n.OpName() != m.OpName() ||
			len(n.Inputs()) != len(m.Inputs()) || len(n.Outputs()) != len(m.Outputs()) {
			return
		}
		for i, o := range n.Outputs() {
			pairs[o] = m.Outputs()[i]
		}
		for i, x := range n.Inputs() {
			pair(x, m.Inputs()[i])
		}
	}
	for k, b := range built {
		a := again[k]
		pairs = map[*graph.Node]*graph.Node{}
		all[k] = pairs
		if len(b.Inputs) != len(a.Inputs) || len(b.Outputs) != len(a.Outputs) {
			continue
		}
		for i, n := range b.Inputs {
			pairs[n] = a.Inputs[i]
		}
		for j, n := range b.Outputs {
			pair(n, a.Outputs[j])
		}
	}
	return all
}
