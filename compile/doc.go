// Package compile turns graphs into runnable programs: it differentiates
// graphs symbolically (Grad, Gradients, Jacobian, Hessian, HVP), appending
// gradient nodes to the same graph so they can be differentiated again, and
// it compiles the nodes that requested outputs and parameter updates need
// into an immutable Program of instructions over numbered slots, through a
// table of passes (see passes.go) that the vm package then runs.
package compile
