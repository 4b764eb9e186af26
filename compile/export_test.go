package compile

import "github.com/nabla-go/nabla/graph"

// Every compilation in this package's tests checks the invariants after
// every pass.
func init() { checkEveryPass = true }

// OptionalPasses names the passes WithoutPass switches off, in order, for
// the tests of package compile_test.
func OptionalPasses() []string {
	var names []string
	for _, p := range passes {
		if !p.required {
			names = append(names, p.name)
		}
	}
	return names
}

// TransposeEveryOp makes forward mode derive every op's tangent from its
// Backward, ignoring forward rules, until the returned function is called.
func TransposeEveryOp() (restore func()) {
	transposeEveryOp = true
	return func() { transposeEveryOp = false }
}

// CountDeclines counts the forward rules that decline, until the returned
// function is called, which returns the count.
func CountDeclines() (stop func() int) {
	n := 0
	onDecline = func(*graph.Node) { n++ }
	return func() int {
		onDecline = nil
		return n
	}
}

// LoopedOps collects the names of the ops that Vmap loops over the batch
// (no batching rule, or one that declined), until the returned function
// is called, which returns them.
func LoopedOps() (stop func() []string) {
	var names []string
	onLoop = func(n *graph.Node) { names = append(names, n.OpName()) }
	return func() []string {
		onLoop = nil
		return names
	}
}
