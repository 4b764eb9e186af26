package dist

import (
	"fmt"
	"os"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/nn"
	"github.com/nabla-go/nabla/ops"
)

// DefaultBucketBytes is the size of DataParallel's gradient buckets:
// PyTorch DDP's bucket_cap_mb of 25.
const DefaultBucketBytes = 25 << 20

// ParallelOption configures DataParallel.
type ParallelOption func(*parallelConfig)

type parallelConfig struct {
	bucketBytes int
}

// BucketBytes sets the bytes of gradients packed into each all-reduce
// (DefaultBucketBytes without it); a gradient larger than that has a
// bucket of its own.
func BucketBytes(n int) ParallelOption { return func(c *parallelConfig) { c.bucketBytes = n } }

// DataParallel is the training option of data-parallel training, the
// design of PyTorch's DistributedDataParallel: every rank computes the
// gradients of its own batch, and before the optimiser's update they are
// averaged over the ranks, so that every rank takes the same step, the
// step one process would take on the ranks' batches together (where the
// loss is a mean over the batch, as nn's losses are). Pass it to
// nn.TrainingUpdates:
//
//	updates, err := nn.TrainingUpdates(opt, loss, model, dist.DataParallel(comm))
//
// The gradients are packed, last parameter first (the order backward
// produces them), into buckets of about DefaultBucketBytes, each summed
// by one AllReduce: few large messages rather than many small ones; a
// gradient of 256 KB or more is all-reduced alone, without copying it
// into a bucket and out. The
// division by Size() is left to the optimiser's update, which the
// compiler fuses it into (no pass of its own over the gradients). Every
// rank builds the same buckets in the same order, as every rank builds the
// same model. Start the ranks from the same parameters (BroadcastState)
// and give each its share of the data (data.Loader's Shard). A single
// process (Size 1) trains as it would without the option.
func DataParallel(c *Comm, opts ...ParallelOption) nn.TrainingOption {
	cfg := parallelConfig{bucketBytes: DefaultBucketBytes}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return nn.TransformGradients(func(grads []*graph.Node, _ []nn.Named) ([]*graph.Node, error) {
		if err := errUnmade("DataParallel", c); err != nil {
			return nil, err
		}
		if cfg.bucketBytes <= 0 {
			return nil, fmt.Errorf("dist: DataParallel: bucket size %d bytes is not positive", cfg.bucketBytes)
		}
		if c.Size() == 1 {
			return grads, nil
		}
		out := make([]*graph.Node, len(grads))
		for _, b := range buckets(grads, cfg.bucketBytes) {
			averageBucket(c, grads, b, out)
		}
		return out, nil
	})
}

// aloneBytes is the size from which a gradient is all-reduced alone, in
// its own memory, rather than copied into a bucket and out of it: the two
// copies of 256 KB take longer than the latency of one more all-reduce on
// shared memory or a fast network (tens of microseconds). Copying W1's
// 1 MB of gradients into one bucket and out took about a tenth of its
// 1 ms step on one thread.
const aloneBytes = 256 << 10

// buckets groups the indices of grads, last first, into runs of at most
// limit bytes; a gradient larger than limit, or of aloneBytes or more, is
// a bucket of its own.
func buckets(grads []*graph.Node, limit int) [][]int {
	var all [][]int
	var cur []int
	bytes := 0
	for i := len(grads) - 1; i >= 0; i-- {
		t := grads[i].Type()
		n := t.Size() * int(t.DType.Size())
		if n >= aloneBytes {
			all = append(all, []int{i})
			continue
		}
		if len(cur) > 0 && bytes+n > limit {
			all = append(all, cur)
			cur, bytes = nil, 0
		}
		cur = append(cur, i)
		bytes += n
	}
	if len(cur) > 0 {
		all = append(all, cur)
	}
	return all
}

// averageBucket averages the gradients grads[i], i in bucket, over the
// ranks with one AllReduce(Sum) of them flattened end to end, and sets
// out[i] to each one's share of the result divided by the number of
// ranks: a Scale, which the compiler fuses into the op that reads it.
func averageBucket(c *Comm, grads []*graph.Node, bucket []int, out []*graph.Node) {
	mean := func(sum *graph.Node) *graph.Node { return ops.Scale(sum, 1/float64(c.Size())) }
	if len(bucket) == 1 {
		i := bucket[0]
		out[i] = mean(AllReduce(c, grads[i], Sum))
		return
	}
	flat := make([]*graph.Node, len(bucket))
	for k, i := range bucket {
		flat[k] = ops.Reshape(grads[i], grads[i].Type().Size())
	}
	sum := AllReduce(c, ops.Concat(0, flat...), Sum)
	off := 0
	for _, i := range bucket {
		n := grads[i].Type().Size()
		out[i] = mean(ops.Reshape(ops.Slice(sum, 0, off, off+n), grads[i].Shape()...))
		off += n
	}
}

// BroadcastState sets every float tensor of state in store (a
// *vm.Machine) to root's value, so that every rank starts training from
// the same parameters, as DistributedDataParallel does at its start:
// call it on every rank after building the machine, with the same state
// (nn.StateOf(model), say). Tensors of other dtypes (counters) are left
// as they are.
func (c *Comm) BroadcastState(store nn.ParamStore, state []nn.Named, root int) error {
	if err := errUnmade("BroadcastState", c); err != nil {
		return err
	}
	if c.isClosed() {
		return fmt.Errorf("dist: BroadcastState on %v after Close", c)
	}
	if store == nil {
		return fmt.Errorf("dist: BroadcastState: the store is nil")
	}
	if root < 0 || root >= c.Size() {
		return fmt.Errorf("dist: BroadcastState: root %d is not a rank of %d", root, c.Size())
	}
	if c.Size() == 1 {
		return nil
	}
	for _, s := range state {
		if s.Node == nil || (s.Node.DType() != graph.Float32 && s.Node.DType() != graph.Float64) {
			continue
		}
		v, err := store.Get(s.Node)
		if err != nil {
			return fmt.Errorf("dist: BroadcastState: %q: %w", s.Name, err)
		}
		if err := c.broadcast(v, v, root, nil); err != nil {
			return fmt.Errorf("dist: BroadcastState: %q: %w", s.Name, err)
		}
		if err := store.Set(s.Node, v); err != nil {
			return fmt.Errorf("dist: BroadcastState: %q: %w", s.Name, err)
		}
	}
	return nil
}

// Save writes a checkpoint of state (see nn.Save) to path from rank 0
// alone, whose values every rank holds alike in data-parallel training.
// Every rank calls it; it returns on each once the file is written, and
// if rank 0 failed, every rank returns an error (rank 0's own).
func (c *Comm) Save(path string, store nn.ParamStore, state []nn.Named) error {
	if err := errUnmade("Save", c); err != nil {
		return err
	}
	if c.isClosed() {
		return fmt.Errorf("dist: Save on %v after Close", c)
	}
	var saveErr error
	if c.Rank() == 0 {
		saveErr = writeCheckpoint(path, store, state)
	}
	status := tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{0}))
	if saveErr != nil {
		status.Float64s()[0] = 1
	}
	if err := c.broadcast(status, status, 0, nil); err != nil {
		return fmt.Errorf("dist: Save %s: %w", path, err)
	}
	switch {
	case saveErr != nil:
		return fmt.Errorf("dist: Save %s: %w", path, saveErr)
	case status.Float64s()[0] != 0:
		return fmt.Errorf("dist: Save %s: rank 0 failed to write the checkpoint (its error is in its output)", path)
	}
	return nil
}

// writeCheckpoint writes state's values in store to the file path.
func writeCheckpoint(path string, store nn.ParamStore, state []nn.Named) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := nn.Save(f, store, state); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
