package dist

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// The collectives below are ops like any other: the compiler schedules
// them, sizes their buffers and does not fuse across them, and they have
// symbolic gradients, as JAX's psum and all_gather do. Every rank must
// build the same graph and run the same programs in the same order, so
// that each rank's k-th collective meets every other rank's k-th; the
// compiler's passes are deterministic, and each rank runs a program's
// instructions in one order, so this holds for identical graphs. Build
// nothing that depends on Rank() between collectives.
//
// A collective on a program's constants runs once, while compiling (the
// constant folder runs its kernel), on every rank alike.
//
// A collective node's first run, and a run at another size than its last
// (a vm.Runner's batch sizes), first checks that every rank gives it a
// tensor of the same size and dtype, by an all-reduce of four numbers: a
// difference is an error on every rank naming both sizes ("dist:
// AllReduce on rank 1 of 2: this rank's tensor has 4 elements
// (float64(4)), another rank's 3: …"), where MPI would read each rank's
// count as given and leave some ranks a silently wrong result.

// floatType checks a collective's Comm and its one input: a float32 or
// float64 tensor.
func floatType(c *Comm, in []graph.Type) (graph.Type, error) {
	switch {
	case c == nil:
		return graph.Type{}, fmt.Errorf("the Comm is nil: get one from dist.Init")
	case c.size == 0:
		return graph.Type{}, fmt.Errorf("the Comm is zero (a dist.Comm{} of no ranks): get one from dist.Init")
	}
	dt, err := graph.CheckInputs(in, 1)
	if err != nil {
		return graph.Type{}, err
	}
	if dt != graph.Float32 && dt != graph.Float64 {
		return graph.Type{}, fmt.Errorf("takes float32 or float64, got %v", dt)
	}
	return in[0], nil
}

// AllReduceOp is the op of AllReduce.
type AllReduceOp struct {
	Comm      *Comm
	Reduction Reduction
	agreed    *agreement // the ranks' sizes, checked (see agree)
}

// AllReduce returns, on every rank, the reduction r (Sum, Mean or Max) of
// the ranks' values of x, element by element (MPI_Allreduce). Its
// gradient is the same all-reduce of the cotangent for Sum and Mean, and
// for Max the ranks' summed cotangent where x holds the maximum (shared
// equally among the ranks that hold it).
func AllReduce(c *Comm, x *graph.Node, r Reduction) *graph.Node {
	graph.Helper()
	return graph.Apply(AllReduceOp{Comm: c, Reduction: r, agreed: newAgreement()}, x)
}

// Name is "AllReduce".
func (AllReduceOp) Name() string { return "AllReduce" }

// DotLabel shows the reduction: "AllReduce(sum)".
func (op AllReduceOp) DotLabel() string { return "AllReduce(" + op.Reduction.String() + ")" }

// Type: one float tensor; the output has its type.
func (op AllReduceOp) Type(in []graph.Type) (graph.Type, error) {
	if op.Reduction < Sum || op.Reduction > Max {
		return graph.Type{}, fmt.Errorf("unknown reduction %v: use dist.Sum, dist.Mean or dist.Max", op.Reduction)
	}
	return floatType(op.Comm, in)
}

// InPlace is 0: the compiler may give the output x's buffer, where
// nothing reads x afterwards (a gradient, in DataParallel), and MPI then
// reduces in it (MPI_IN_PLACE), sparing a buffer and the copy of x into
// it that MPI's all-reduce begins with.
func (AllReduceOp) InPlace() int { return 0 }

// Forward all-reduces in[0] into out.
func (op AllReduceOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.Comm.allReduce(out, in[0], op.Reduction, op.agreed)
}

// Backward: Sum and Mean are linear and their own transposes (the loss is
// the sum of every rank's); Max routes the summed cotangent to where x
// was the maximum.
func (op AllReduceOp) Backward(ctx *graph.GradContext, g *graph.Node) []*graph.Node {
	if op.Reduction != Max {
		return []*graph.Node{AllReduce(op.Comm, g, op.Reduction)}
	}
	mask := ops.Equal(ctx.Input(0), ctx.Output())
	holders := AllReduce(op.Comm, mask, Sum)
	return []*graph.Node{ops.Mul(ops.Div(mask, holders), AllReduce(op.Comm, g, Sum))}
}

// JVP: Sum and Mean are linear, so the tangent is all-reduced alike
// (element by element, batched or not); Max's rule is derived from
// Backward.
func (op AllReduceOp) JVP(ctx *graph.JVPContext) *graph.Node {
	if op.Reduction == Max {
		ctx.Decline()
		return nil
	}
	return AllReduce(op.Comm, ctx.Tangent(0), op.Reduction)
}

// BroadcastOp is the op of Broadcast.
type BroadcastOp struct {
	Comm   *Comm
	Root   int
	agreed *agreement // the ranks' sizes, checked (see agree)
}

// Broadcast returns root's value of x on every rank (MPI_Bcast). Its
// gradient is ReduceTo: the ranks' cotangents summed on root, zero on the
// others.
func Broadcast(c *Comm, x *graph.Node, root int) *graph.Node {
	graph.Helper()
	return graph.Apply(BroadcastOp{Comm: c, Root: root, agreed: newAgreement()}, x)
}

// Name is "Broadcast".
func (BroadcastOp) Name() string { return "Broadcast" }

// DotLabel shows the root: "Broadcast(from 0)".
func (op BroadcastOp) DotLabel() string { return fmt.Sprintf("Broadcast(from %d)", op.Root) }

// Type: one float tensor; the output has its type.
func (op BroadcastOp) Type(in []graph.Type) (graph.Type, error) {
	return rootedType(op.Comm, op.Root, in)
}

// rootedType checks a rooted collective's input and root.
func rootedType(c *Comm, root int, in []graph.Type) (graph.Type, error) {
	t, err := floatType(c, in)
	if err == nil && (root < 0 || root >= c.Size()) {
		err = fmt.Errorf("root %d is not a rank of %d", root, c.Size())
	}
	return t, err
}

// InPlace is 0: the compiler may give the output x's buffer, which the
// broadcast then overwrites on the ranks but root.
func (BroadcastOp) InPlace() int { return 0 }

// Forward broadcasts root's in[0] into out.
func (op BroadcastOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.Comm.broadcast(out, in[0], op.Root, op.agreed)
}

// Backward sums the cotangents on root.
func (op BroadcastOp) Backward(_ *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{ReduceTo(op.Comm, g, op.Root)}
}

// JVP: Broadcast is linear.
func (op BroadcastOp) JVP(ctx *graph.JVPContext) *graph.Node {
	return Broadcast(op.Comm, ctx.Tangent(0), op.Root)
}

// ReduceToOp is the op of ReduceTo.
type ReduceToOp struct {
	Comm   *Comm
	Root   int
	agreed *agreement // the ranks' sizes, checked (see agree)
}

// ReduceTo returns on root the sum of the ranks' values of x, and zeros on
// the other ranks (MPI_Reduce). Its gradient is Broadcast of root's
// cotangent.
func ReduceTo(c *Comm, x *graph.Node, root int) *graph.Node {
	graph.Helper()
	return graph.Apply(ReduceToOp{Comm: c, Root: root, agreed: newAgreement()}, x)
}

// Name is "ReduceTo".
func (ReduceToOp) Name() string { return "ReduceTo" }

// DotLabel shows the root: "ReduceTo(0)".
func (op ReduceToOp) DotLabel() string { return fmt.Sprintf("ReduceTo(%d)", op.Root) }

// Type: one float tensor; the output has its type.
func (op ReduceToOp) Type(in []graph.Type) (graph.Type, error) {
	return rootedType(op.Comm, op.Root, in)
}

// Forward sums in[0] on root into out.
func (op ReduceToOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.Comm.reduceTo(out, in[0], op.Root, op.agreed)
}

// Backward broadcasts root's cotangent.
func (op ReduceToOp) Backward(_ *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{Broadcast(op.Comm, g, op.Root)}
}

// JVP: ReduceTo is linear.
func (op ReduceToOp) JVP(ctx *graph.JVPContext) *graph.Node {
	return ReduceTo(op.Comm, ctx.Tangent(0), op.Root)
}

// AllGatherOp is the op of AllGather.
type AllGatherOp struct {
	Comm   *Comm
	agreed *agreement // the ranks' sizes, checked (see agree)
}

// AllGather returns, on every rank, the ranks' values of x concatenated
// in rank order along the first axis: x of shape (n, ...) gives
// (Size()·n, ...) (MPI_Allgather). Its gradient is ReduceScatter(Sum) of
// the cotangent.
func AllGather(c *Comm, x *graph.Node) *graph.Node {
	graph.Helper()
	return graph.Apply(AllGatherOp{Comm: c, agreed: newAgreement()}, x)
}

// Name is "AllGather".
func (AllGatherOp) Name() string { return "AllGather" }

// Type: one float tensor with at least one axis; the first grows Size()
// times.
func (op AllGatherOp) Type(in []graph.Type) (graph.Type, error) {
	t, err := floatType(op.Comm, in)
	if err != nil {
		return t, err
	}
	if t.Rank() == 0 {
		return graph.Type{}, fmt.Errorf("gathers along the first axis, but x is a scalar: reshape it to (1)")
	}
	shape := append([]int{t.Shape[0] * op.Comm.Size()}, t.Shape[1:]...)
	return t.WithShape(shape...), nil
}

// Forward gathers in[0] from every rank into out.
func (op AllGatherOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.Comm.allGather(out, in[0], op.agreed)
}

// Backward: each rank's block of every rank's cotangent, summed.
func (op AllGatherOp) Backward(_ *graph.GradContext, g *graph.Node) []*graph.Node {
	return []*graph.Node{ReduceScatter(op.Comm, g, Sum)}
}

// JVP: AllGather is linear; batched tangents (their leading axis is the
// batch, not x's first) are derived from Backward.
func (op AllGatherOp) JVP(ctx *graph.JVPContext) *graph.Node {
	if ctx.Batch() != 0 {
		ctx.Decline()
		return nil
	}
	return AllGather(op.Comm, ctx.Tangent(0))
}

// ReduceScatterOp is the op of ReduceScatter.
type ReduceScatterOp struct {
	Comm      *Comm
	Reduction Reduction
	agreed    *agreement // the ranks' sizes, checked (see agree)
}

// ReduceScatter reduces the ranks' values of x (Sum or Mean) and gives
// each rank its block: x of shape (Size()·n, ...) gives (n, ...), rank r
// holding rows r·n to (r+1)·n of the reduction (MPI_Reduce_scatter_block).
// Its gradient is AllGather of the cotangent (divided by Size() for Mean).
func ReduceScatter(c *Comm, x *graph.Node, r Reduction) *graph.Node {
	graph.Helper()
	return graph.Apply(ReduceScatterOp{Comm: c, Reduction: r, agreed: newAgreement()}, x)
}

// Name is "ReduceScatter".
func (ReduceScatterOp) Name() string { return "ReduceScatter" }

// DotLabel shows the reduction: "ReduceScatter(sum)".
func (op ReduceScatterOp) DotLabel() string { return "ReduceScatter(" + op.Reduction.String() + ")" }

// Type: one float tensor whose first axis Size() divides; the first axis
// shrinks Size() times.
func (op ReduceScatterOp) Type(in []graph.Type) (graph.Type, error) {
	if op.Reduction != Sum && op.Reduction != Mean {
		return graph.Type{}, fmt.Errorf("reduction %v: ReduceScatter takes dist.Sum or dist.Mean", op.Reduction)
	}
	t, err := floatType(op.Comm, in)
	if err != nil {
		return t, err
	}
	k := op.Comm.Size()
	if t.Rank() == 0 || t.Shape[0]%k != 0 {
		return graph.Type{}, fmt.Errorf("x %s must have a first axis that the %d ranks divide", graph.ShapeString(t.Shape), k)
	}
	shape := append([]int{t.Shape[0] / k}, t.Shape[1:]...)
	return t.WithShape(shape...), nil
}

// Forward reduces in[0] and scatters its blocks into out.
func (op ReduceScatterOp) Forward(out *tensor.Dense, in []*tensor.Dense) error {
	return op.Comm.reduceScatter(out, in[0], op.Reduction, op.agreed)
}

// Backward gathers the cotangents: each rank's block's gradient is that
// rank's cotangent.
func (op ReduceScatterOp) Backward(_ *graph.GradContext, g *graph.Node) []*graph.Node {
	gathered := AllGather(op.Comm, g)
	if op.Reduction == Mean {
		gathered = ops.Scale(gathered, 1/float64(op.Comm.Size()))
	}
	return []*graph.Node{gathered}
}

// JVP: ReduceScatter is linear; batched tangents are derived from
// Backward.
func (op ReduceScatterOp) JVP(ctx *graph.JVPContext) *graph.Node {
	if ctx.Batch() != 0 {
		ctx.Decline()
		return nil
	}
	return ReduceScatter(op.Comm, ctx.Tangent(0), op.Reduction)
}

// The collectives' keys (graph.Keyer) leave out their agreements, so
// that the compiler's common-subexpression pass still merges two of one
// value: the agreement is a node's record of its runs, not a parameter.

// Key is the Comm and the reduction.
func (op AllReduceOp) Key() string { return fmt.Sprintf("%p %d", op.Comm, op.Reduction) }

// Key is the Comm and the root.
func (op BroadcastOp) Key() string { return fmt.Sprintf("%p %d", op.Comm, op.Root) }

// Key is the Comm and the root.
func (op ReduceToOp) Key() string { return fmt.Sprintf("%p %d", op.Comm, op.Root) }

// Key is the Comm.
func (op AllGatherOp) Key() string { return fmt.Sprintf("%p", op.Comm) }

// Key is the Comm and the reduction.
func (op ReduceScatterOp) Key() string { return fmt.Sprintf("%p %d", op.Comm, op.Reduction) }
