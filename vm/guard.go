package vm

import (
	"errors"
	"sync"
)

// errNilMachine is what a nil or zero-value *Machine reports.
var errNilMachine = errors.New("nabla: the machine is nil or zero: make one with vm.New")

// errBusy is what a machine used during its own Run reports.
var errBusy = errors.New("nabla: the machine is running on another goroutine: a Machine is for one goroutine at a time (make one per goroutine; they may share a Program)")

// A guard is held for the whole of every use of a machine's buffers: a
// Run, a Value, a Set. Machines joined by SharingParams share one, since
// they share buffers: while one is used, the others are busy too.
//
// Methods that can fail take it with tryAcquire and report errBusy when
// another goroutine holds it; the few that cannot fail (Close, Profile,
// Threads...) wait for it.
type guard struct{ mu sync.Mutex }

// acquire takes the machine's guard for a method that returns an error,
// or says why the machine cannot be used now. The caller releases it.
func (m *Machine) acquire() error {
	if m == nil || m.prog == nil || m.guard == nil {
		return errNilMachine
	}
	if !m.guard.mu.TryLock() {
		return errBusy
	}
	if m.lost != nil {
		m.guard.mu.Unlock()
		return m.lost
	}
	return nil
}

// release gives back the guard acquire or wait took.
func (m *Machine) release() { m.guard.mu.Unlock() }

// wait takes the machine's guard for a method that cannot fail, waiting
// for another goroutine's use to end. It reports false, holding nothing,
// for a nil or zero machine.
func (m *Machine) wait() bool {
	if m == nil || m.prog == nil || m.guard == nil {
		return false
	}
	m.guard.mu.Lock()
	return true
}
