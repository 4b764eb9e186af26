package dist

import (
	"fmt"
	"sync"
	"unsafe"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// agreement is what the ranks last agreed on for one collective node:
// the number of elements and the dtype of the tensor it exchanges. MPI
// takes each rank's count at its word: ranks giving one collective
// tensors of other sizes had it read past the shorter or leave the longer
// one's tail, silently on some ranks (an all-reduce of 3 elements on rank
// 0 and 4 on rank 1 left rank 1's fourth element its own; a broadcast
// gave rank 1 a zero there and rank 0 no error).
//
// The builders (AllReduce, …) give each node one; an op made without
// them has none, and checks at every run.
type agreement struct {
	mu     sync.Mutex
	agreed bool
	count  int
	dtype  tensor.Dtype
}

// newAgreement is a node's agreement, none made yet.
func newAgreement() *agreement { return new(agreement) }

// agree checks, where a has not agreed on t's size and dtype (the node's
// first run, or a size it has not run at last, as a vm.Runner's other
// batch sizes give), that every rank gives collective what a tensor of
// t's size and dtype, by an all-reduce of four numbers; ranks that run
// the same programs in the same order (as the collectives require) check
// at the same calls. A difference is an error on every rank, naming this
// rank's size and another's; the Comm stays usable.
func (c *Comm) agree(what string, a *agreement, t *tensor.Dense) error {
	if a.holds(t.Size(), t.Dtype()) {
		return nil // allocating nothing: a run's path
	}
	return c.agreeOn(what, a, graph.TypeOf(t.Dtype(), t.Shape()...))
}

// holds reports whether the ranks have agreed on n elements of dt (false
// for a nil agreement).
func (a *agreement) holds(n int, dt tensor.Dtype) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.agreed && a.count == n && a.dtype == dt
}

// agreeOn is agree for a tensor of type t: on a device, a collective's
// call checks its input's type once, as the program loads (the sizes of a
// device's program are fixed).
func (c *Comm) agreeOn(what string, a *agreement, t graph.Type) error {
	n, dt := t.Size(), t.DType
	if a != nil {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.agreed && a.count == n && a.dtype == dt {
			return nil
		}
	}
	bits := float64(8 * dt.Size())
	// The largest of n, −n, the element's bits and their negation over
	// the ranks: the largest and smallest of each.
	buf := make([]float64, 8)
	copy(buf, []float64{float64(n), -float64(n), bits, -bits})
	l := c.lib
	send, recv := unsafe.Pointer(&buf[0]), unsafe.Pointer(&buf[4])
	src, dst := buffer{ptr: send, count: 4, dtype: l.float64}, buffer{ptr: recv, count: 4, dtype: l.float64}
	m := newCall(l.allreduce, l.iallreduce, src, dst, uintptr(send), uintptr(recv), 4, l.float64, l.max, l.world)
	if err := c.collective(what, &m); err != nil {
		return err
	}
	most, least := buf[4], -buf[5]
	wide, narrow := buf[6], -buf[7]
	switch {
	case most != least:
		other := most
		if float64(n) == most {
			other = least
		}
		return fmt.Errorf("dist: %s on %v: this rank's tensor has %d elements (%v), another rank's %d: every rank must give a collective a tensor of the same shape",
			what, c, n, t, int(other))
	case wide != narrow:
		other := wide
		if bits == wide {
			other = narrow
		}
		return fmt.Errorf("dist: %s on %v: this rank's tensor is %v, another rank's holds %d-bit elements: every rank must give a collective the same dtype",
			what, c, t, int(other))
	}
	if a != nil {
		a.agreed, a.count, a.dtype = true, n, dt
	}
	return nil
}
