package vm

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
)

// newBodies makes a machine for every subgraph an instruction's op runs
// (a loop's body: see graph.SubgraphOp), sharing this machine's workers,
// and lends their runners to the op through an Exec of its own.
func (m *Machine) newBodies() error {
	instrs := m.prog.Instructions()
	for i := range instrs {
		in := &instrs[i]
		if len(in.Bodies) == 0 {
			continue
		}
		if m.bodies == nil {
			m.bodies = make([][]*Machine, len(instrs))
			m.execs = make([]*graph.Exec, len(instrs))
		}
		subs := in.Op
		var op any = subs
		if subs == nil {
			op = in.Multi
		}
		graphs := op.(graph.SubgraphOp).Subgraphs()
		for k, body := range in.Bodies {
			bm, err := New(body, m.bodyOptions()...)
			if err != nil {
				return fmt.Errorf("nabla: vm.New: %s (node %v): subgraph %d: %v", in.Name(), in.Node, k, err)
			}
			bm.runner = newBodyRunner(bm, graphs[k])
			m.bodies[i] = append(m.bodies[i], bm)
		}
	}
	m.lendRunners()
	return nil
}

// bodyOptions configure a body's machine like this one, on its workers.
func (m *Machine) bodyOptions() []Option {
	opts := []Option{func(b *Machine) { b.inherit, b.threads = m.pool, m.threads }}
	if m.checkNaN {
		opts = append(opts, WithNaNCheck())
	}
	if m.memLimit != 0 {
		opts = append(opts, WithMemoryLimit(m.memLimit))
	}
	return opts
}

// lendRunners makes, for each instruction running subgraphs, the Exec
// lending their runners.
func (m *Machine) lendRunners() {
	for i, bodies := range m.bodies {
		if bodies == nil {
			continue
		}
		runners := make([]graph.Runner, len(bodies))
		for k, b := range bodies {
			runners[k] = b.runner
		}
		m.execs[i] = m.exec.WithRunners(runners)
	}
}

// serialBodies makes the body machines run serially, once this machine's
// workers are stopped.
func (m *Machine) serialBodies() {
	for _, bodies := range m.bodies {
		for _, b := range bodies {
			b.pool, b.exec = nil, graph.NewExec(nil)
			b.serialBodies()
		}
	}
	m.lendRunners()
}

// execFor is the Exec lent to instruction i's kernel.
func (m *Machine) execFor(i int) *graph.Exec {
	if m.execs != nil && m.execs[i] != nil {
		return m.execs[i]
	}
	return m.exec
}

// bodyRunner runs a body's machine for the op that runs the subgraph: its
// inputs' and outputs' buffers are the machine's own.
type bodyRunner struct {
	m    *Machine
	ins  []*tensor.Dense
	outs []*tensor.Dense
}

func newBodyRunner(m *Machine, sub *graph.Subgraph) *bodyRunner {
	r := &bodyRunner{m: m}
	for _, n := range sub.Inputs {
		r.ins = append(r.ins, m.values[n]) // nil when the body does not read it
	}
	for _, n := range sub.Outputs {
		r.outs = append(r.outs, m.values[n])
	}
	return r
}

func (r *bodyRunner) In(i int) *tensor.Dense  { return r.ins[i] }
func (r *bodyRunner) Out(i int) *tensor.Dense { return r.outs[i] }
func (r *bodyRunner) Run() error              { return r.m.execute() }
