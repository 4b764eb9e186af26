// Package gradcheck verifies derivatives against finite differences: it is
// nabla's counterpart of PyTorch's torch.autograd.gradcheck and
// gradgradcheck, for authors of custom ops and of functions built from ops.
//
// Check compares the Jacobian that the ops' symbolic Backward builds with
// central finite differences in float64; GradGradCheck does the same for
// second derivatives. CheckOp (and CheckMultiOp for ops with several
// outputs) is the one call for an op author: besides first and second
// derivatives it checks that type inference agrees with what the kernel
// writes, that the kernel leaves its inputs alone and is deterministic, and
// that Backward returns one gradient per input. The built-in ops of package
// ops are checked through CheckOp like any user's op, from one table.
//
// Each check builds its function once into a graph of its own, compiles it
// once, and reruns the program at every finite-difference point. Options
// sets the step, the tolerances, the inputs to check, a fast mode that
// compares random projections vᵀJu first, and the seed of every random
// draw.
//
// A failure is an *Error that says what is wrong and where: the input and
// output, the worst entries with their indices and their analytic and
// numeric values, and for a function of several ops the first op whose own
// Backward fails its local check, with the file:line where it was built.
package gradcheck
