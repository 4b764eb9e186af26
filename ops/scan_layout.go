package ops

// ScanLayout is what a backend needs to run a Scan's loop itself, its
// body's program step by step on the Scan's buffers, as the CPU's kernel
// does:
//
//   - inputs: Carries initial carries, Sums initial sums, Seqs sequences
//     (stacked over Steps on their leading axis), then the captured values;
//   - outputs: the final carries and sums, then the stacked step outputs;
//   - the body's inputs are the op's inputs less the sums (BodyInput), its
//     outputs the op's outputs less those Skip marks, in order;
//   - step t (Steps−1 … 0 when Reverse) reads carry c from output c and
//     slice t of each sequence, writes slice t of each step output, adds
//     the sums' terms into outputs Carries … Carries+Sums−1, and its new
//     carries become outputs 0 … Carries−1; captured values are the same
//     at every step.
type ScanLayout struct {
	Carries, Sums, Seqs, Steps int
	Reverse                    bool
	// Skip marks, per output, those left empty: pruned step outputs that
	// the body does not compute.
	Skip []bool
}

// BodyInput is the body input that op input i (not a sum) feeds.
func (l ScanLayout) BodyInput(i int) int {
	if i < l.Carries {
		return i
	}
	return i - l.Sums
}

// ScanLayoutOf returns the layout of op when it is a Scan whose steps are
// all taken, the same whatever the values: not one with Until, nor a
// While's derivative skipping steps. Other loops (and other ops) report
// false: only a kernel that reads values can run them.
func ScanLayoutOf(op any) (ScanLayout, bool) {
	s, ok := op.(*scanOp)
	if !ok || s.until != 0 || s.skipBy != 0 {
		return ScanLayout{}, false
	}
	skip := make([]bool, len(s.body.Outputs))
	for j := range skip {
		skip[j] = s.skipped(j)
	}
	return ScanLayout{Carries: s.carries, Sums: s.sums, Seqs: s.seqs, Steps: s.steps, Reverse: s.reverse, Skip: skip}, true
}
