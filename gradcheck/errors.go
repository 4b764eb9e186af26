package gradcheck

import (
	"fmt"
	"strconv"
	"strings"
)

// Problem classifies what a check found wrong.
type Problem uint8

// The problems a check reports.
const (
	// Misuse: the call itself is wrong (options, inputs, a nil op or fn, a
	// fn that panics, an op with no Backward).
	Misuse Problem = iota + 1
	// BuildFailed: fn or the op does not build (type inference rejects
	// the inputs), or its gradient graph does not.
	BuildFailed
	// ForwardFailed: a kernel returned an error or panicked.
	ForwardFailed
	// TypeMismatch: the kernel's output does not fit the type that type
	// inference gives (it leaves elements unwritten, or writes past them).
	TypeMismatch
	// ReadsOutput: the kernel's result depends on what its output buffer
	// held before the call.
	ReadsOutput
	// ModifiesInput: the kernel wrote into one of its inputs.
	ModifiesInput
	// Nondeterministic: two runs on equal inputs gave different bits.
	Nondeterministic
	// BackwardResult: Backward returned the wrong number of gradients, a
	// gradient of the wrong type, or recorded an error.
	BackwardResult
	// FirstDerivative: the Jacobian built by Backward differs from
	// finite differences.
	FirstDerivative
	// SecondDerivative: the derivative of the gradient differs from
	// finite differences of the gradient.
	SecondDerivative
	// ForwardRule: an op's forward-mode rule (graph.ForwardDifferentiable)
	// gives Jacobian–vector products other than its Backward's Jacobian.
	ForwardRule
)

var problemNames = [...]string{
	Misuse:           "misuse",
	BuildFailed:      "build failed",
	ForwardFailed:    "forward failed",
	TypeMismatch:     "type inference disagrees with the kernel",
	ReadsOutput:      "kernel reads its output buffer",
	ModifiesInput:    "kernel modifies its input",
	Nondeterministic: "kernel is not deterministic",
	BackwardResult:   "bad Backward result",
	FirstDerivative:  "first derivative",
	SecondDerivative: "second derivative",
	ForwardRule:      "forward-mode rule",
}

// String names the problem, as error texts show it.
func (p Problem) String() string {
	if int(p) < len(problemNames) && problemNames[p] != "" {
		return problemNames[p]
	}
	return "Problem(" + strconv.Itoa(int(p)) + ")"
}

// Error is a failed check: what is wrong, where, and for derivatives the
// worst entries and the op to blame.
type Error struct {
	// Func is the check that failed: "Check", "GradGradCheck", "CheckOp"
	// or "CheckMultiOp".
	Func string
	// Op names the op CheckOp or CheckMultiOp was given ("" for Check and
	// GradGradCheck).
	Op string
	// Problem classifies the failure.
	Problem Problem
	// Detail says what is wrong, in a sentence.
	Detail string
	// Input is the input concerned (by position), or -1.
	Input int
	// Output is the output concerned (by position), or -1.
	Output int
	// Entries are the worst mismatching derivative entries, worst first
	// (derivative problems only).
	Entries []Entry
	// Culprit is, for a derivative mismatch of a function of several ops,
	// the first op in creation order whose own Backward fails its local
	// check at the values it had; nil when none was found or the check
	// was of a single op.
	Culprit *Culprit
	// Err is the underlying error (a graph build error, a kernel's
	// error), or nil.
	Err error

	outputs int // how many outputs the checked function has, for messages
}

// Entry is one derivative that disagrees with finite differences.
type Entry struct {
	// Output is the output element's index (empty for a scalar output,
	// and for second-derivative checks, whose function is a scalar).
	Output []int
	// Input is the input element's index (empty for a scalar input).
	Input []int
	// Analytic is the derivative the op's Backward gives.
	Analytic float64
	// Numeric is the central finite difference.
	Numeric float64
}

// Culprit is the op a derivative mismatch is blamed on.
type Culprit struct {
	// Op is the op's name.
	Op string
	// Node describes the node (op, id, type), as graph.Node.String does.
	Node string
	// Site is the file:line where the node was built ("" if unknown).
	Site string
	// NoGradient is set when the op's Backward declares no gradient (nil)
	// for an input its output does depend on, such as StopGradient's.
	NoGradient bool
	// Err is the failure of the op's local check.
	Err *Error
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Error is the diagnosis: what failed, where, and the worst entries.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("gradcheck: ")
	b.WriteString(e.Func)
	if e.Op != "" {
		b.WriteString("(" + e.Op + ")")
	}
	b.WriteString(": " + e.Problem.String() + ": " + e.Detail)
	if e.Err != nil && !strings.Contains(e.Detail, e.Err.Error()) {
		b.WriteString(": " + e.Err.Error())
	}
	for _, en := range e.Entries {
		b.WriteString("\n\t" + e.entryString(en))
	}
	if c := e.Culprit; c != nil {
		fmt.Fprintf(&b, "\n\tculprit: %s", c.Node)
		if c.Site != "" {
			b.WriteString(" built at " + c.Site)
		}
		if c.NoGradient {
			fmt.Fprintf(&b, ": its Backward declares no gradient for input %d, yet its output changes with it", c.Err.Input)
		} else {
			b.WriteString(": the first op whose own Backward fails its local check")
		}
		if len(c.Err.Entries) > 0 {
			b.WriteString("; " + c.Err.entryString(c.Err.Entries[0]))
		}
	}
	return b.String()
}

// entryString formats one entry, e.g. "d out[1,0] / d in1[2]: analytic 2.4, numeric 1.2".
func (e *Error) entryString(en Entry) string {
	out := "out"
	if e.outputs > 1 {
		out += strconv.Itoa(e.Output)
	}
	of := "d " + out + indexString(en.Output)
	if e.Problem == SecondDerivative {
		of = "d⟨∇f, v⟩"
	}
	return fmt.Sprintf("%s / d in%d%s: analytic %.6g, numeric %.6g", of, e.Input, indexString(en.Input), en.Analytic, en.Numeric)
}

func indexString(idx []int) string {
	if len(idx) == 0 {
		return ""
	}
	parts := make([]string, len(idx))
	for i, v := range idx {
		parts[i] = strconv.Itoa(v)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// unravel turns a flat row-major offset into an index of the given shape.
func unravel(flat int, shape []int) []int {
	idx := make([]int, len(shape))
	for a := len(shape) - 1; a >= 0; a-- {
		if shape[a] > 0 {
			idx[a] = flat % shape[a]
			flat /= shape[a]
		}
	}
	return idx
}

// fail builds an Error with no input or output attached.
func fail(problem Problem, err error, format string, args ...any) *Error {
	return &Error{Problem: problem, Detail: fmt.Sprintf(format, args...), Input: -1, Output: -1, Err: err}
}

// asError returns e as an error, keeping a nil *Error a nil error.
func asError(e *Error, fn, op string) error {
	if e == nil {
		return nil
	}
	e.Func, e.Op = fn, op
	return e
}
