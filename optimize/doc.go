// Package optimize minimises smooth deterministic functions with first- and
// second-order methods, as SciPy's minimize and Optim.jl do: L-BFGS with a
// strong-Wolfe line search, Newton's method with the exact Hessian (modified
// to be positive-definite where it is not), and Newton-CG, which needs only
// Hessian–vector products.
//
// Minimize takes a scalar node of a graph and the parameter it depends on:
// it differentiates the graph once (compile.Grad, and compile.Hessian or
// compile.HVP when the method needs them), compiles the programs and runs
// them on vm machines at every point the method visits. MinimizeFunc takes
// plain Go functions instead. Both return a Result that says how the run
// ended, in SciPy's words.
//
// The algorithms are those of Nocedal and Wright, Numerical Optimization
// (2nd ed.): the line search is their Algorithms 3.5 and 3.6 with cubic
// interpolation, Newton's modification their Algorithm 3.3 (Cholesky with
// a multiple of the identity added), Newton-CG their Algorithm 7.1 and
// L-BFGS their Algorithm 7.4 (the two-loop recursion).
package optimize
