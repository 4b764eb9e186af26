package graph

import "fmt"

// Batchable is implemented by ops with a batching rule: how to apply the
// op to a batch of inputs at once, for compile.Vmap. Ops without one
// (a user's custom op, say) are still batched, by a loop that applies
// them to one example at a time (a Scan over the batch); a rule is for
// speed, turning B small applications into one large one.
type Batchable interface {
	// Batch builds, with graph ops on ctx's inputs, the op's output for
	// every example at once: a node of shape (ctx.Size(), out.shape...)
	// whose row b is the op applied to row b of each batched input and to
	// the unbatched inputs as they are. A rule that cannot handle a case
	// calls ctx.Decline before building anything (a node that fails to
	// build poisons the graph), and the op is looped over the batch
	// instead.
	Batch(ctx *BatchContext) *Node
}

// MultiBatchable is Batchable for multi-output ops: Batch returns one
// batched node per output.
type MultiBatchable interface {
	Batch(ctx *BatchContext) []*Node
}

// BatchContext is what an op's batching rule sees: the op's node as it
// was traced for one example (for its types), and its inputs in the graph
// the batched program is built in, each either batched (a leading axis of
// Size() examples before the example's shape) or shared by every example.
type BatchContext struct {
	node     *Node
	inputs   []*Node
	batched  []bool
	size     int
	declined bool
	sweep    BatchSweeper
}

// BatchSweeper batches any traced graph as the batching driver does: it
// builds in target the counterparts of outs, nodes of a graph whose
// leaves are inputs (and constants), given the inputs' counterparts ins,
// batched where marked, and says which counterparts are batched. The
// driver lends one to ops whose rule batches a subgraph they run (a
// loop's body).
type BatchSweeper func(target *Graph, outs, inputs, ins []*Node, batched []bool) ([]*Node, []bool, error)

// WithSweeper lends s to the op's rule (see Sweep) and returns c. The
// batching driver calls it.
func (c *BatchContext) WithSweeper(s BatchSweeper) *BatchContext {
	if c != nil {
		c.sweep = s
	}
	return c
}

// Sweep batches a subgraph through the driver's BatchSweeper.
func (c *BatchContext) Sweep(target *Graph, outs, inputs, ins []*Node, batched []bool) ([]*Node, []bool, error) {
	if c == nil || c.sweep == nil {
		return nil, nil, fmt.Errorf("no batch sweeper: batch with compile.Vmap")
	}
	return c.sweep(target, outs, inputs, ins, batched)
}

// NewBatchContext is called by the batching driver: node is the op's
// output traced for one example, inputs its inputs in the graph being
// built, batched which of them carry a leading axis of size examples.
func NewBatchContext(node *Node, inputs []*Node, batched []bool, size int) *BatchContext {
	return &BatchContext{node: node, inputs: inputs, batched: batched, size: size}
}

// Graph returns the graph the rule builds in: its inputs' (nil for a nil
// context).
func (c *BatchContext) Graph() *Graph {
	if c == nil {
		return nil
	}
	return innermost(c.inputs)
}

// Input returns input i in the graph being built: of shape (Size(),
// example shape...) when Batched(i), of the example's shape otherwise
// (nil when there is no input i).
func (c *BatchContext) Input(i int) *Node {
	if c == nil {
		return nil
	}
	return nodeAt(c.inputs, i)
}

// Inputs returns the op's inputs in the graph being built.
func (c *BatchContext) Inputs() []*Node {
	if c == nil {
		return nil
	}
	return c.inputs
}

// Batched reports whether input i carries the batch's leading axis.
func (c *BatchContext) Batched(i int) bool {
	return c != nil && i >= 0 && i < len(c.batched) && c.batched[i]
}

// Size returns the number of examples in the batch.
func (c *BatchContext) Size() int {
	if c == nil {
		return 0
	}
	return c.size
}

// Example returns the op's output as traced for one example (the first
// output, for a multi-output op): read its type, and its inputs' types
// through Inputs, but build nothing from it, since it belongs to the
// traced graph.
func (c *BatchContext) Example() *Node {
	if c == nil {
		return nil
	}
	return c.node
}

// Shape returns the shape of a batched value whose example has shape:
// shape with the batch's size in front.
func (c *BatchContext) Shape(shape []int) []int {
	return append([]int{c.Size()}, shape...)
}

// Decline says the rule cannot batch this application (a case it does
// not handle): the driver loops the op over the batch instead. The rule's
// return value is then ignored.
func (c *BatchContext) Decline() {
	if c != nil {
		c.declined = true
	}
}

// Declined reports whether the rule called Decline (true for a nil
// context).
func (c *BatchContext) Declined() bool { return c == nil || c.declined }
