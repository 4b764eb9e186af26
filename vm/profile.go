package vm

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nabla-go/nabla/graph"
)

// instrStats is what profiling measures of one instruction.
type instrStats struct {
	runs  int64
	total time.Duration
}

// stopwatch times successive laps with one clock reading each.
type stopwatch struct {
	start time.Time
	last  time.Duration // since start, at the end of the last lap
}

// lap returns the time since the last lap ended (or since start).
func (s *stopwatch) lap() time.Duration {
	now := time.Since(s.start)
	d := now - s.last
	s.last = now
	return d
}

// WithProfile makes the machine time every instruction it runs, for
// Profile. Timing costs one clock reading per instruction (some 35 ns
// here); Run still allocates nothing. With WithNaNCheck, an instruction's
// time includes checking its outputs.
func WithProfile() Option {
	return func(m *Machine) { m.stats = make([]instrStats, len(m.prog.Instructions())) }
}

// ResetProfile forgets what profiling has measured so far.
func (m *Machine) ResetProfile() {
	if m.wait() {
		clear(m.stats)
		m.release()
	}
}

// Profile returns what the machine measured of each instruction since it
// was made or last reset. Without WithProfile every count and time is
// zero. Profile, like ResetProfile, waits for a Run on another
// goroutine to end.
func (m *Machine) Profile() Profile {
	if !m.wait() {
		return Profile{}
	}
	defer m.release()
	instrs := m.prog.Instructions()
	p := Profile{Entries: make([]ProfileEntry, len(instrs))}
	for i := range instrs {
		in := &instrs[i]
		e := ProfileEntry{Instruction: i, Op: in.Name(), Node: in.Node, Fused: in.Absorbed(), Site: in.Node.Site(), Type: in.OutTypes[0]}
		switch f := in.Fused(); {
		case f != nil:
			e.Cost = f.Cost(in.InTypes, in.OutTypes[0])
		case in.Op != nil:
			e.Cost = graph.CostOf(in.Op, in.InTypes, in.OutTypes[0])
		default:
			e.Cost = graph.DefaultCost(in.InTypes, in.OutTypes...)
		}
		if m.stats != nil {
			e.Runs, e.Total = m.stats[i].runs, m.stats[i].total
		}
		e.OnHost = m.exe != nil && m.exe.OnHost(i)
		p.Entries[i] = e
	}
	return p
}

// Profile is a machine's measurements, one entry per instruction.
type Profile struct {
	Entries []ProfileEntry // in the program's order
}

// ProfileEntry is what was measured of one instruction.
type ProfileEntry struct {
	Instruction int           // its index in the program's instructions
	Op          string        // the op's name
	Node        *graph.Node   // the node it computes (a multi-output op's first)
	Fused       []*graph.Node // the nodes a fused instruction computes (Instruction.Absorbed)
	Site        string        // where the node was built, file:line
	Type        graph.Type    // the node's type
	Runs        int64         // how many times it ran
	Total       time.Duration
	Cost        graph.Cost // of one run (graph.CostOf)
	// OnHost marks an instruction of a machine on a device (OnDevice) that
	// ran on the host for want of a device kernel, its inputs and outputs
	// copied: its time includes the copies.
	OnHost bool
}

// Mean is the time of one run.
func (e ProfileEntry) Mean() time.Duration {
	if e.Runs == 0 {
		return 0
	}
	return e.Total / time.Duration(e.Runs)
}

// GFLOPS is the rate of floating-point operations, in billions a second.
func (e ProfileEntry) GFLOPS() float64 {
	if e.Total <= 0 {
		return 0
	}
	return float64(e.Cost.Flops) * float64(e.Runs) / e.Total.Seconds() / 1e9
}

// Total is the time spent in every instruction.
func (p Profile) Total() time.Duration {
	var t time.Duration
	for _, e := range p.Entries {
		t += e.Total
	}
	return t
}

// ByTotal returns the entries sorted by total time, largest first (in the
// program's order where times tie).
func (p Profile) ByTotal() []ProfileEntry {
	s := slices.Clone(p.Entries)
	slices.SortStableFunc(s, func(a, b ProfileEntry) int { return cmp.Compare(b.Total, a.Total) })
	return s
}

// WriteTable writes the top instructions by total time (all of them when
// top <= 0) as a table: instruction, op, node and site, shape, calls,
// total and mean time, share of the total and GFLOP/s.
func (p Profile) WriteTable(w io.Writer, top int) error {
	total := p.Total()
	sorted := p.ByTotal()
	if top <= 0 || top > len(sorted) {
		top = len(sorted)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%d instructions, %s in total\n", len(sorted), formatDuration(total))
	fmt.Fprintln(tw, "instr\top\tnode\tshape\tcalls\ttime\tmean\t%\tGFLOP/s")
	for _, e := range sorted[:top] {
		gflops := "-"
		if e.Cost.Flops > 0 && e.Total > 0 {
			gflops = fmt.Sprintf("%.2f", e.GFLOPS())
		}
		op := e.Op
		if e.OnHost {
			op += " (on the host)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%.1f\t%s\n", e.Instruction, op, nodeLabel(e),
			graph.ShapeString(e.Type.Shape), e.Runs, formatDuration(e.Total), formatDuration(e.Mean()),
			percent(e.Total, total), gflops)
	}
	if rest := sorted[top:]; len(rest) > 0 {
		var t time.Duration
		for _, e := range rest {
			t += e.Total
		}
		fmt.Fprintf(tw, "\t\t%d more\t\t\t%s\t\t%.1f\t\n", len(rest), formatDuration(t), percent(t, total))
	}
	return tw.Flush()
}

// nodeLabel names an entry's node by its name, or else its id, then its
// scope and the site it was built at.
func nodeLabel(e ProfileEntry) string {
	label := fmt.Sprintf("#%d", e.Node.ID())
	if name := e.Node.Name(); name != "" {
		label = fmt.Sprintf("%q", name)
	}
	if path := scopePath(e.Node.Scope()); path != "" {
		label += " " + path
	}
	if e.Site != "" {
		label += " " + e.Site
	}
	return label
}

// scopePath is a scope's path with each gradient scope shortened to "∇"
// (their names list every parameter differentiated).
func scopePath(s *graph.Scope) string {
	var names []string
	for ; s != nil; s = s.Parent {
		if s.IsGradient() {
			names = append(names, "∇")
		} else {
			names = append(names, s.Name)
		}
	}
	slices.Reverse(names)
	return strings.Join(names, "/")
}

func percent(d, total time.Duration) float64 {
	if total <= 0 {
		return 0
	}
	return 100 * float64(d) / float64(total)
}

// formatDuration prints d with three significant digits or so, in the
// unit that suits it.
func formatDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d >= time.Microsecond:
		return fmt.Sprintf("%.2fµs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%dns", int64(d))
}
