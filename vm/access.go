package vm

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// Value returns the value of a program output, input or parameter after
// the last run. The tensor is the machine's own buffer: it changes on the
// next Run; clone it to keep it. (A constant output is a copy: writing it
// cannot change the program.) Before the first Run only parameters and
// constants have values; anything else is an error.
func (m *Machine) Value(n *graph.Node) (*tensor.Dense, error) {
	if err := m.acquire(); err != nil {
		return nil, err
	}
	defer m.release()
	return m.value(n)
}

// Scalar returns the value of a scalar (or one-element) program output,
// input or parameter after the last run, as a float64.
func (m *Machine) Scalar(n *graph.Node) (float64, error) {
	if err := m.acquire(); err != nil {
		return 0, err
	}
	defer m.release()
	v, err := m.value(n)
	if err != nil {
		return 0, err
	}
	if size := graph.ShapeSize(v.Shape()); size != 1 {
		return 0, fmt.Errorf("nabla: Scalar: %v has %d elements, not one", n, size)
	}
	return graph.Float(v, 0), nil
}

// value is Value's work, the guard held.
func (m *Machine) value(n *graph.Node) (*tensor.Dense, error) {
	v, ok := m.values[n]
	if !ok {
		return nil, fmt.Errorf("nabla: Value: %v is not an output, input or parameter of the program", n)
	}
	if !m.ran && n.Kind() != graph.KindParam && n.Kind() != graph.KindConst {
		if s, _ := m.prog.SlotOf(n); m.prog.Slots()[s].Kind != graph.KindConst {
			return nil, fmt.Errorf("nabla: Value: %v has no value yet: the machine has not run", n)
		}
	}
	if m.exe != nil {
		s, _ := m.prog.SlotOf(n)
		if err := m.fetch(s); err != nil { // constants are not fetched
			return nil, err
		}
	}
	return v, nil
}

// Get returns a copy of a parameter's current value.
func (m *Machine) Get(param *graph.Node) (*tensor.Dense, error) {
	if err := m.acquire(); err != nil {
		return nil, err
	}
	defer m.release()
	s, err := m.paramSlot("Get", param)
	if err != nil {
		return nil, err
	}
	if err := m.fetch(s); err != nil {
		return nil, err
	}
	return graph.CloneDense(m.slots[s])
}

// Set copies value into a parameter. The value must have the parameter's
// dtype and shape.
func (m *Machine) Set(param *graph.Node, value *tensor.Dense) error {
	if err := m.acquire(); err != nil {
		return err
	}
	defer m.release()
	s, err := m.paramSlot("Set", param)
	if err != nil {
		return err
	}
	if value == nil {
		return fmt.Errorf("nabla: Set: value for %v is nil", param)
	}
	if err := checkValue(value, param.Type()); err != nil {
		return fmt.Errorf("nabla: Set: parameter %q: %v", param.Name(), err)
	}
	copyData(m.slots[s], value)
	return m.written("Set", param, s)
}

// SetScalar sets a one-element parameter (a learning rate, say) to v,
// converted to its dtype: Set without a tensor, so that it allocates
// nothing and the value is the machine's own from the start.
func (m *Machine) SetScalar(param *graph.Node, v float64) error {
	if err := m.acquire(); err != nil {
		return err
	}
	defer m.release()
	s, err := m.paramSlot("SetScalar", param)
	if err != nil {
		return err
	}
	if size := param.Type().Size(); size != 1 {
		return fmt.Errorf("nabla: SetScalar: parameter %v has %d elements, not one", param, size)
	}
	graph.SetFloat(m.slots[s], 0, v)
	return m.written("SetScalar", param, s)
}

// written copies a parameter's host value, just set, to the device.
func (m *Machine) written(what string, param *graph.Node, slot int) error {
	if m.exe == nil {
		return nil
	}
	if err := m.exe.Write(slot, m.slots[slot]); err != nil {
		return fmt.Errorf("nabla: %s: parameter %q: %v: %v", what, param.Name(), m.device, err)
	}
	return nil
}

// paramSlot is param's slot, the guard held.
func (m *Machine) paramSlot(what string, param *graph.Node) (int, error) {
	if param.Kind() != graph.KindParam || param.Err() != nil {
		return 0, fmt.Errorf("nabla: %s: %v is not a parameter", what, param)
	}
	s, ok := m.prog.SlotOf(param)
	if !ok {
		return 0, fmt.Errorf("nabla: %s: parameter %v is not used by the program", what, param)
	}
	return s, nil
}
