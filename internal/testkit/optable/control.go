package optable

import (
	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// ScanTable is rows of loops through ops.Scan, for the checks the op
// table's rows go through.
func ScanTable() []Case {
	v := NewValues(11)
	nodes := func(xs ...*graph.Node) []*graph.Node { return xs }
	return []Case{
		{Builder: "Scan", Variant: "tanh RNN with matrix products", Inputs: []*tensor.Dense{
			v.Signed(2, 3), v.Uniform(-0.6, 0.6, 3, 3), v.Uniform(-0.6, 0.6, 2, 3), v.Signed(4, 2, 2)},
			Build: func(in []*graph.Node) *graph.Node {
				W, U := in[1], in[2]
				_, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					h := ops.Tanh(ops.Add(ops.MatMul(c[0], W), ops.MatMul(x[0], U)))
					return nodes(h), nodes(h)
				}, nodes(in[0]), nodes(in[3]))
				return ys[0]
			}},
		{Builder: "Scan", Variant: "carried tuple with gates", Inputs: []*tensor.Dense{
			v.Signed(3), v.Signed(3), v.Signed(5, 3), v.Signed(3)},
			Build: func(in []*graph.Node) *graph.Node {
				w := in[3]
				final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					cell := ops.Add(ops.Mul(ops.Sigmoid(x[0]), c[1]), ops.Mul(ops.Sigmoid(ops.Mul(c[0], w)), ops.Tanh(x[0])))
					h := ops.Mul(ops.Sigmoid(ops.Add(x[0], c[0])), ops.Tanh(cell))
					return nodes(h, cell), nil
				}, nodes(in[0], in[1]), nodes(in[2]))
				return ops.Concat(0, final[0], final[1])
			}},
		{Builder: "Scan", Variant: "reverse, two sequences", Inputs: []*tensor.Dense{
			v.Signed(2), v.Signed(4, 2), v.Signed(4, 2)},
			Build: func(in []*graph.Node) *graph.Node {
				_, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					s := ops.Add(ops.Mul(c[0], x[0]), ops.Sin(x[1]))
					return nodes(s), nodes(ops.Mul(s, x[1]))
				}, nodes(in[0]), nodes(in[1], in[2]), ops.Reverse())
				return ys[0]
			}},
		{Builder: "Scan", Variant: "no carry (a map) reading a captured value", Inputs: []*tensor.Dense{
			v.Signed(3, 2), v.Signed(2)},
			Build: func(in []*graph.Node) *graph.Node {
				_, ys := ops.Scan(func(_, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					return nil, nodes(ops.Mul(ops.Mul(x[0], x[0]), ops.Exp(ops.Scale(in[1], 0.5))))
				}, nil, nodes(in[0]))
				return ys[0]
			}},
		{Builder: "Scan", Variant: "Steps without sequences (an integrator)", Inputs: []*tensor.Dense{
			v.Signed(2), v.Uniform(0.5, 1.5)},
			Build: func(in []*graph.Node) *graph.Node {
				k := in[1]
				final, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
					x, vel := ops.Slice(c[0], 0, 0, 1), ops.Slice(c[0], 0, 1, 2)
					acc := ops.Neg(ops.Mul(k, ops.Sin(x)))
					return nodes(ops.Concat(0, ops.Add(x, ops.Scale(vel, 0.1)), ops.Add(vel, ops.Scale(acc, 0.1)))), nil
				}, nodes(in[0]), nil, ops.Steps(6))
				return final[0]
			}},
		{Builder: "Scan", Variant: "nested Scan", Inputs: []*tensor.Dense{
			v.Signed(2), v.Signed(3, 2), v.Signed(2, 2)},
			Build: func(in []*graph.Node) *graph.Node {
				inner := in[2]
				final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					f, _ := ops.Scan(func(ci, xi []*graph.Node) ([]*graph.Node, []*graph.Node) {
						return nodes(ops.Tanh(ops.Add(ops.Mul(ci[0], xi[0]), x[0]))), nil
					}, nodes(c[0]), nodes(inner))
					return nodes(f[0]), nil
				}, nodes(in[0]), nodes(in[1]))
				return final[0]
			}},
	}
}

// CondTable is rows of branches through ops.Cond, for the checks the op
// table's rows go through: the predicate (input 0) selects a branch and
// gets no gradient; each branch is taken in some row.
func CondTable() []Case {
	v := NewValues(13)
	nodes := func(xs ...*graph.Node) []*graph.Node { return xs }
	const predNoGrad = "the predicate only selects a branch: it gets no gradient"
	cond := func(variant string, pred *tensor.Dense, build func(in []*graph.Node) *graph.Node, inputs ...*tensor.Dense) Case {
		c := Case{Builder: "Cond", Variant: variant, Build: build, Inputs: append([]*tensor.Dense{pred}, inputs...),
			NoGrad: predNoGrad, NoGradInputs: []int{0}}
		for i := 1; i < len(c.Inputs); i++ {
			c.Checked = append(c.Checked, i)
		}
		return c
	}
	// An operand and a weight the branches capture.
	captured := func(in []*graph.Node) *graph.Node {
		w := in[2]
		return ops.Cond(in[0], func(x []*graph.Node) []*graph.Node {
			return nodes(ops.Add(ops.Tanh(ops.Mul(x[0], w)), ops.Sin(x[0])))
		}, func(x []*graph.Node) []*graph.Node {
			return nodes(ops.Mul(ops.Square(x[0]), ops.Exp(w)))
		}, nodes(in[1]))[0]
	}
	// Two outputs; each branch captures a value the other does not read.
	twoOutputs := func(in []*graph.Node) *graph.Node {
		a, b := in[2], in[3]
		outs := ops.Cond(in[0], func(x []*graph.Node) []*graph.Node {
			return nodes(ops.Mul(x[0], a), ops.Sin(a))
		}, func(x []*graph.Node) []*graph.Node {
			return nodes(ops.Exp(ops.Mul(x[0], b)), ops.Mul(b, b))
		}, nodes(in[1]))
		return ops.Concat(0, outs[0], outs[1])
	}
	// A step's predicate: the sign of its slice's sum, which changes
	// across the steps (sums 0.8, -0.5, -0.5, 1.4).
	inScan := func(in []*graph.Node) *graph.Node {
		w := in[2]
		final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			pred := ops.Greater(ops.Sum(x[0]), ops.Sum(ops.Neg(x[0])))
			return ops.Cond(pred, func(o []*graph.Node) []*graph.Node {
				return nodes(ops.Tanh(ops.Add(ops.Mul(o[0], w), o[1])))
			}, func(o []*graph.Node) []*graph.Node {
				return nodes(ops.Sin(ops.Mul(o[0], o[1])))
			}, nodes(c[0], x[0])), nil
		}, nodes(in[0]), nodes(in[1]))
		return final[0]
	}
	steps := TensorOf([]int{4, 2}, 0.5, 0.3, -0.7, 0.2, 0.4, -0.9, 0.8, 0.6)
	// A Cond in a branch of a Cond, reading the outer operand by capture.
	nested := func(in []*graph.Node) *graph.Node {
		return ops.Cond(in[0], func(x []*graph.Node) []*graph.Node {
			return ops.Cond(in[2], func(y []*graph.Node) []*graph.Node {
				return nodes(ops.Mul(ops.Sin(y[0]), x[0]))
			}, func(y []*graph.Node) []*graph.Node {
				return nodes(ops.Square(y[0]))
			}, nodes(ops.Cos(x[0])))
		}, func(x []*graph.Node) []*graph.Node {
			return nodes(ops.Neg(x[0]))
		}, nodes(in[1]))[0]
	}
	return []Case{
		cond("then taken: an operand and a captured weight", TensorOf(nil, 1), captured, v.Signed(2, 3), v.Signed(3)),
		cond("else taken: an operand and a captured weight", TensorOf(nil, 0), captured, v.Signed(2, 3), v.Signed(3)),
		cond("then taken by an integer predicate: two outputs, captures of either branch", IntsOf(graph.Int64, nil, -2),
			twoOutputs, v.Signed(3), v.Signed(3), v.Signed(3)),
		cond("else taken by an integer predicate: two outputs, captures of either branch", IntsOf(graph.Int64, nil, 0),
			twoOutputs, v.Signed(3), v.Signed(3), v.Signed(3)),
		{Builder: "Cond", Variant: "in a Scan body, both branches taken across the steps", Build: inScan,
			Inputs: []*tensor.Dense{v.Signed(2), steps, v.Signed(2)}},
		cond("nested, inner then taken", TensorOf(nil, 1), func(in []*graph.Node) *graph.Node {
			return nested([]*graph.Node{in[0], in[1], in[0]})
		}, v.Signed(2)),
		cond("nested, inner else taken", TensorOf(nil, 1), func(in []*graph.Node) *graph.Node {
			return nested([]*graph.Node{in[0], in[1], ops.Sub(in[0], in[0])})
		}, v.Signed(2)),
	}
}

// WhileTable is rows of loops through ops.While, for the checks the op
// table's rows go through: input 0 is the bound a counter carried beside
// the state must stay under, which sets the number of steps (none, one,
// stopping early, stopped by MaxSteps) and gets no gradient.
func WhileTable() []Case {
	v := NewValues(17)
	loop := func(max int) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node {
			limit, w, b := in[0], in[2], in[3]
			one := ops.Div(limit, limit)
			final, _ := ops.While(func(c []*graph.Node) *graph.Node {
				return ops.Less(c[1], limit)
			}, func(c []*graph.Node) []*graph.Node {
				h := ops.Tanh(ops.Add(ops.Mul(c[0], w), ops.Sum(ops.Mul(b, c[0]))))
				return []*graph.Node{h, ops.Add(c[1], one)}
			}, []*graph.Node{in[1], ops.Sub(limit, limit)}, ops.MaxSteps(max))
			return final[0]
		}
	}
	row := func(variant string, limit float64, max int) Case {
		return Case{Builder: "While", Variant: variant, Build: loop(max),
			Inputs:  []*tensor.Dense{TensorOf(nil, limit), v.Signed(3), v.Uniform(0.5, 1.2, 3), v.Signed(3)},
			Checked: []int{1, 2, 3}, NoGrad: "the bound only decides the number of steps: it gets no gradient", NoGradInputs: []int{0}}
	}
	return []Case{
		row("zero steps", 0.5, 4),
		row("one step", 1.5, 4),
		row("stopping early", 3.5, 6),
		row("hitting MaxSteps", 50, 5),
	}
}

// UntilTable is rows of loops through ops.Scan with ops.Until, for the
// checks the op table's rows go through: input 0 is the bound a counter
// carried beside the state must exceed, which stops the loop (at step 0,
// early, or never) and gets no gradient; the row's value holds both the
// final carry and the stacked outputs, padded with zeros.
func UntilTable() []Case {
	v := NewValues(19)
	loop := func(in []*graph.Node) *graph.Node {
		limit, w, xs := in[0], in[2], in[3]
		one := ops.Div(limit, limit)
		final, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			h := ops.Tanh(ops.Add(ops.Mul(c[0], w), x[0]))
			k := ops.Add(c[1], one)
			return []*graph.Node{h, k}, []*graph.Node{ops.Mul(h, x[0]), ops.Greater(k, limit)}
		}, []*graph.Node{in[1], ops.Sub(limit, limit)}, []*graph.Node{xs}, ops.Until())
		return ops.Concat(0, final[0], ops.Reshape(ys[0], 12))
	}
	row := func(variant string, limit float64) Case {
		return Case{Builder: "Scan", Variant: variant, Build: loop,
			Inputs:  []*tensor.Dense{TensorOf(nil, limit), v.Signed(3), v.Uniform(0.5, 1.2, 3), v.Signed(4, 3)},
			Checked: []int{1, 2, 3}, NoGrad: "the bound only decides the number of steps: it gets no gradient", NoGradInputs: []int{0}}
	}
	return []Case{
		row("Until stopping at step 0", 0.5),
		row("Until stopping early", 2.5),
		row("Until never stopping", 50),
	}
}

// CheckpointTable is rows of computations through ops.Checkpoint, whose
// gradients compute them again: layers reading their weights by capture,
// several outputs, a value computed outside read besides the inputs, a
// weight read both inside and outside (so that the gradient reaches it
// along both), a checkpoint in a loop's body, and checkpoints nested.
func CheckpointTable() []Case {
	v := NewValues(23)
	nodes := func(xs ...*graph.Node) []*graph.Node { return xs }
	layer := func(x, w, b *graph.Node) *graph.Node { return ops.Tanh(ops.Add(ops.MatMul(x, w), b)) }
	return []Case{
		{Builder: "Checkpoint", Variant: "two tanh layers reading their weights", Inputs: []*tensor.Dense{
			v.Signed(2, 3), v.Uniform(-0.8, 0.8, 3, 3), v.Signed(3), v.Uniform(-0.8, 0.8, 3, 3)},
			Build: func(in []*graph.Node) *graph.Node {
				return ops.Checkpoint(func(x []*graph.Node) []*graph.Node {
					return nodes(layer(layer(x[0], in[1], in[2]), in[3], in[2]))
				}, in[0])[0]
			}},
		{Builder: "Checkpoint", Variant: "two outputs, two inputs", Inputs: []*tensor.Dense{
			v.Signed(3), v.Signed(3), v.Signed(3)},
			Build: func(in []*graph.Node) *graph.Node {
				outs := ops.Checkpoint(func(x []*graph.Node) []*graph.Node {
					p := ops.Mul(ops.Sin(x[0]), x[1])
					return nodes(ops.Exp(ops.Mul(p, in[2])), ops.Square(p))
				}, in[0], in[1])
				return ops.Concat(0, outs[0], outs[1])
			}},
		{Builder: "Checkpoint", Variant: "a computed value read besides the input, a weight read outside too", Inputs: []*tensor.Dense{
			v.Signed(3), v.Signed(3), v.Signed(3)},
			Build: func(in []*graph.Node) *graph.Node {
				w := in[2]
				h := ops.Sin(ops.Mul(in[1], w)) // computed from w, read by f
				y := ops.Checkpoint(func(x []*graph.Node) []*graph.Node {
					return nodes(ops.Mul(ops.Tanh(ops.Add(x[0], h)), ops.Exp(w)))
				}, ops.Mul(in[0], w))[0]
				return ops.Mul(y, w)
			}},
		{Builder: "Checkpoint", Variant: "in a Scan body, reading the sequence's slice and a captured weight", Inputs: []*tensor.Dense{
			v.Signed(3), v.Signed(4, 3), v.Signed(3)},
			Build: func(in []*graph.Node) *graph.Node {
				w := in[2]
				final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					return ops.Checkpoint(func(z []*graph.Node) []*graph.Node {
						return nodes(ops.Tanh(ops.Add(ops.Mul(z[0], w), ops.Sin(z[1]))))
					}, c[0], x[0]), nil
				}, nodes(in[0]), nodes(in[1]))
				return final[0]
			}},
		{Builder: "Checkpoint", Variant: "nested", Inputs: []*tensor.Dense{
			v.Signed(3), v.Signed(3)},
			Build: func(in []*graph.Node) *graph.Node {
				return ops.Checkpoint(func(x []*graph.Node) []*graph.Node {
					inner := ops.Checkpoint(func(z []*graph.Node) []*graph.Node {
						return nodes(ops.Sin(ops.Mul(z[0], in[1])))
					}, ops.Cos(x[0]))[0]
					return nodes(ops.Mul(inner, x[0]))
				}, in[0])[0]
			}},
	}
}

// RootTable is rows of solutions through ops.Root and ops.FixedPoint,
// whose derivatives come from the implicit function theorem: solved by
// Newton's iteration or by fixed-point iterations in a While loop, with
// vector and matrix parameters, a parameter computed from another (both
// read by F), a value read outside F too, and a Root in a Scan's body.
// The solves stop at rounding, so finite differences see the root's
// derivatives.
func RootTable() []Case {
	v := NewValues(29)
	// newton solves F(x) = 0 elementwise, F' being F's derivative.
	newton := func(dF func(x *graph.Node) *graph.Node) ops.RootSolve {
		return func(F ops.RootFunc, x0 *graph.Node) *graph.Node {
			tol := x0.Graph().Scalar(1e-14, x0.DType())
			final, _ := ops.While(func(c []*graph.Node) *graph.Node {
				return ops.Greater(ops.Max(ops.Abs(F(c[0]))), tol)
			}, func(c []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Sub(c[0], ops.Div(F(c[0]), dF(c[0])))}
			}, []*graph.Node{x0}, ops.MaxSteps(60))
			return final[0]
		}
	}
	// cubic is x³ + p·x − q, solved from x = 0 by Newton's iteration.
	cubic := func(p, q *graph.Node, opts ...ops.RootOption) *graph.Node {
		x0 := ops.Scale(q, 0)
		return ops.Root(func(x *graph.Node) *graph.Node {
			return ops.Sub(ops.Add(ops.Mul(ops.Square(x), x), ops.Mul(p, x)), q)
		}, x0, newton(func(x *graph.Node) *graph.Node { return ops.Add(ops.Scale(ops.Square(x), 3), p) }), opts...)
	}
	return []Case{
		{Builder: "Root", Variant: "√a by Newton's iteration", Inputs: []*tensor.Dense{v.Positive(3)},
			Build: func(in []*graph.Node) *graph.Node {
				a := in[0]
				return ops.Root(func(x *graph.Node) *graph.Node { return ops.Sub(ops.Square(x), a) }, a,
					newton(func(x *graph.Node) *graph.Node { return ops.Scale(x, 2) }))
			}},
		{Builder: "Root", Variant: "x + tanh(x·W)/2 = b by fixed-point iterations", Inputs: []*tensor.Dense{
			v.Uniform(-0.8, 0.8, 3, 3), v.Signed(1, 3)},
			Build: func(in []*graph.Node) *graph.Node { return tanhSystem(in[0], in[1]) }},
		{Builder: "Root", Variant: "x + tanh(x·W)/2 = b, solved with ∂F/∂x matrix-free", Inputs: []*tensor.Dense{
			v.Uniform(-0.8, 0.8, 3, 3), v.Signed(1, 3)},
			Build: func(in []*graph.Node) *graph.Node { return tanhSystem(in[0], in[1], ops.DenseUpTo(0)) }},
		{Builder: "Root", Variant: "parameters computed from one another", Inputs: []*tensor.Dense{v.Signed(2), v.Signed(2)},
			Build: func(in []*graph.Node) *graph.Node {
				p := ops.Exp(in[0])
				return cubic(p, ops.Mul(p, in[1]))
			}},
		{Builder: "Root", Variant: "in a Scan body", Inputs: []*tensor.Dense{v.Signed(2), v.Signed(3, 2), v.Positive(2)},
			Build: func(in []*graph.Node) *graph.Node {
				w := in[2]
				final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					return []*graph.Node{cubic(w, ops.Add(c[0], x[0]))}, nil
				}, []*graph.Node{in[0]}, []*graph.Node{in[1]})
				return final[0]
			}},
		{Builder: "Root", Variant: "in a Scan body, matrix-free", Inputs: []*tensor.Dense{v.Signed(2), v.Signed(3, 2), v.Positive(2)},
			Build: func(in []*graph.Node) *graph.Node {
				w := in[2]
				final, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					return []*graph.Node{cubic(w, ops.Add(c[0], x[0]), ops.DenseUpTo(0))}, nil
				}, []*graph.Node{in[0]}, []*graph.Node{in[1]})
				return final[0]
			}},
		{Builder: "FixedPoint", Variant: "x = θ·cos(x) + sin(c), θ read outside too", Inputs: []*tensor.Dense{
			v.Uniform(-0.5, 0.5, 3), v.Signed(3)},
			Build: func(in []*graph.Node) *graph.Node {
				theta, s := in[0], ops.Sin(in[1])
				x := ops.FixedPoint(func(x *graph.Node) *graph.Node { return ops.Add(ops.Mul(theta, ops.Cos(x)), s) },
					s, 1e-15, 200)
				return ops.Mul(x, theta)
			}},
	}
}

// tanhSystem solves x + tanh(x·W)/2 = b for x by the fixed-point
// iterations x ← b − tanh(x·W)/2, a contraction for W's entries in
// (−0.8, 0.8); its Jacobian I + diag(1 − tanh²)·Wᵀ/2 is not symmetric.
func tanhSystem(W, b *graph.Node, opts ...ops.RootOption) *graph.Node {
	half := func(x *graph.Node) *graph.Node { return ops.Scale(ops.Tanh(ops.MatMul(x, W)), 0.5) }
	tol := b.Graph().Scalar(1e-15, b.DType())
	return ops.Root(func(x *graph.Node) *graph.Node { return ops.Sub(ops.Add(x, half(x)), b) }, b,
		func(F ops.RootFunc, x0 *graph.Node) *graph.Node {
			final, _ := ops.While(func(c []*graph.Node) *graph.Node {
				return ops.Greater(ops.Max(ops.Abs(F(c[0]))), tol)
			}, func(c []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Sub(b, half(c[0]))}
			}, []*graph.Node{x0}, ops.MaxSteps(400))
			return final[0]
		}, opts...)
}
