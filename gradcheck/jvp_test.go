package gradcheck_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
	"github.com/nabla-go/nabla/vm"
)

// jvpSetup is a table row's op applied to input nodes, with the inputs it
// is differentiated with respect to and a tangent for each.
type jvpSetup struct {
	g        *graph.Graph
	xs       []*graph.Node // one per row input
	wrt      []int         // the inputs differentiated
	tangents []*tensor.Dense
	y        *graph.Node
}

func newJVPSetup(c opCase) jvpSetup {
	g := graph.New()
	s := jvpSetup{g: g, xs: make([]*graph.Node, len(c.Inputs))}
	v := newValues(7)
	for i, x := range c.Inputs {
		s.xs[i] = g.Input(fmt.Sprintf("x%d", i), x.Dtype(), x.Shape()...)
		checked := c.Checked == nil || slices.Contains(c.Checked, i)
		if checked && graph.IsFloat(x.Dtype()) && !slices.Contains(c.NoGradInputs, i) {
			s.wrt = append(s.wrt, i)
			s.tangents = append(s.tangents, v.Signed(x.Shape()...))
		}
	}
	s.y = c.Build(s.xs)
	return s
}

// tangentNodes are the tangents as constants of the row's graph.
func (s jvpSetup) tangentNodes() (wrt, ts []*graph.Node) {
	for k, i := range s.wrt {
		wrt = append(wrt, s.xs[i])
		ts = append(ts, s.g.Const(s.tangents[k]))
	}
	return wrt, ts
}

// eval compiles outs and runs them on the row's inputs, the
// differentiated ones moved by h along the tangents.
func (s jvpSetup) eval(t *testing.T, c opCase, outs []*graph.Node, h float64) [][]float64 {
	t.Helper()
	p, err := compile.Compile(outs)
	if err != nil {
		t.Fatal(err)
	}
	m, err := vm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	feeds := vm.Feeds{}
	for i, x := range c.Inputs {
		v, _ := graph.CloneDense(x)
		if k := slices.Index(s.wrt, i); k >= 0 {
			for e := range v.Float64s() {
				v.Float64s()[e] += h * s.tangents[k].Float64s()[e]
			}
		}
		feeds[s.xs[i]] = v
	}
	if err := m.Run(feeds); err != nil {
		t.Fatal(err)
	}
	vals := make([][]float64, len(outs))
	for i, o := range outs {
		v, err := m.Value(o)
		if err != nil {
			t.Fatal(err)
		}
		vals[i] = slices.Clone(graph.Float64s(v))
	}
	return vals
}

func closeTo(got, want []float64, atol, rtol float64) (int, bool) {
	for i := range want {
		if math.Abs(got[i]-want[i]) > atol+rtol*math.Abs(want[i]) {
			return i, false
		}
	}
	return 0, true
}

// TestJVPColumn is the table's forward-mode column: for every row, the
// JVP equals central finite differences along the tangent and the dense
// Jacobian (reverse mode, a row per output element) times the tangent;
// and to second order, the JVP of the gradient and the gradient of the
// JVP both equal the reverse-over-reverse Hessian–vector product and
// finite differences of the gradient. The Scan rows take forward mode
// through loops.
func TestJVPColumn(t *testing.T) {
	for _, c := range slices.Concat(builtinTable(), scanRows(), condRows()) {
		if c.StopsGradient || c.NoGrad != "" && len(c.Checked) == 0 && len(c.NoGradInputs) == len(c.Inputs) {
			continue // no derivative to take
		}
		t.Run(c.Name(), func(t *testing.T) {
			s := newJVPSetup(c)
			if len(s.wrt) == 0 || !graph.IsFloat(s.y.DType()) {
				t.Skip("no float input or output to differentiate")
			}
			wrt, ts := s.tangentNodes()
			jvp, err := compile.JVP([]*graph.Node{s.y}, wrt, ts)
			if err != nil {
				t.Fatal(err)
			}
			// J·t from the dense Jacobian, in reverse mode.
			var dense *graph.Node
			for k, x := range wrt {
				jac, err := compile.JacobianWith(s.y, x, compile.Reverse)
				if err != nil {
					t.Fatal(err)
				}
				m := ops.Reshape(jac, s.y.Type().Size(), x.Type().Size())
				jt := ops.Reshape(ops.MatMul(m, ops.Reshape(ts[k], x.Type().Size(), 1)), s.y.Shape()...)
				if dense == nil {
					dense = jt
				} else {
					dense = ops.Add(dense, jt)
				}
			}
			eps, fdTol := c.Eps, 1e-4
			if eps == 0 {
				eps = 1e-6
			}
			exact := 1e-10 // how closely two symbolic derivatives agree
			for _, n := range s.g.Nodes() {
				if n.DType() == graph.Float32 {
					exact, eps, fdTol = 1e-6, 1e-2, 1e-2 // rounded through float32
				}
			}
			got := s.eval(t, c, []*graph.Node{jvp[0], dense}, 0)
			plus, minus := s.eval(t, c, []*graph.Node{s.y}, eps)[0], s.eval(t, c, []*graph.Node{s.y}, -eps)[0]
			fd := make([]float64, len(plus))
			for i := range fd {
				fd[i] = (plus[i] - minus[i]) / (2 * eps)
			}
			if i, ok := closeTo(got[0], got[1], 1e-12, exact); !ok {
				t.Fatalf("JVP entry %d is %v, the dense Jacobian times the tangent %v", i, got[0][i], got[1][i])
			}
			if i, ok := closeTo(got[0], fd, 1e-6, fdTol); !ok {
				t.Fatalf("JVP entry %d is %v, finite differences %v", i, got[0][i], fd[i])
			}

			// Second order, through s = ⟨w, y⟩.
			w := s.g.Const(newValues(9).Signed(s.y.Shape()...))
			sum := ops.Sum(ops.Mul(s.y, w))
			grads, err := compile.GradWith(sum, wrt, compile.ZerosIfDisconnected())
			if err != nil {
				t.Fatal(err)
			}
			fwdOverRev, err := compile.JVP(grads, wrt, ts)
			if err != nil {
				t.Fatal(err)
			}
			revOverFwd, err := compile.GradWith(ops.Sum(ops.Mul(jvp[0], w)), wrt, compile.ZerosIfDisconnected())
			if err != nil {
				t.Fatal(err)
			}
			var gt *graph.Node
			for k := range grads {
				term := ops.Sum(ops.Mul(grads[k], ts[k]))
				if gt == nil {
					gt = term
				} else {
					gt = ops.Add(gt, term)
				}
			}
			revOverRev, err := compile.GradWith(gt, wrt, compile.ZerosIfDisconnected())
			if err != nil {
				t.Fatal(err)
			}
			n := len(wrt)
			all := s.eval(t, c, slices.Concat(fwdOverRev, revOverFwd, revOverRev), 0)
			gPlus, gMinus := s.eval(t, c, grads, eps), s.eval(t, c, grads, -eps)
			for k := range n {
				if i, ok := closeTo(all[k], all[2*n+k], 1e-12, 10*exact); !ok {
					t.Fatalf("input %d: JVP of the gradient entry %d is %v, the Hessian–vector product %v", k, i, all[k][i], all[2*n+k][i])
				}
				if i, ok := closeTo(all[n+k], all[2*n+k], 1e-12, 10*exact); !ok {
					t.Fatalf("input %d: gradient of the JVP entry %d is %v, the Hessian–vector product %v", k, i, all[n+k][i], all[2*n+k][i])
				}
				fd := make([]float64, len(gPlus[k]))
				for i := range fd {
					fd[i] = (gPlus[k][i] - gMinus[k][i]) / (2 * eps)
				}
				if i, ok := closeTo(all[k], fd, 1e-5, 10*fdTol); !ok {
					t.Fatalf("input %d: JVP of the gradient entry %d is %v, finite differences of the gradient %v", k, i, all[k][i], fd[i])
				}
			}
		})
	}
}

// TestPatternColumn checks, for every row of the table, that the Jacobian
// sparsity pattern found from the graph holds every nonzero of the dense
// Jacobian at the row's inputs, that the sparse Jacobian computed with it
// equals the dense one, and that so does the forward-mode Jacobian (all
// unit tangents carried at once: every op's batched forward rule).
func TestPatternColumn(t *testing.T) {
	for _, c := range slices.Concat(builtinTable(), scanRows(), condRows()) {
		if c.StopsGradient || c.NoGrad != "" && len(c.Checked) == 0 && len(c.NoGradInputs) == len(c.Inputs) {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			s := newJVPSetup(c)
			if len(s.wrt) == 0 || !graph.IsFloat(s.y.DType()) {
				t.Skip("no float input or output to differentiate")
			}
			var outs []*graph.Node
			var sparse []*compile.Sparse
			for _, i := range s.wrt {
				jac, err := compile.JacobianWith(s.y, s.xs[i], compile.Reverse)
				if err != nil {
					t.Fatal(err)
				}
				sp, err := compile.SparseJacobian(s.y, s.xs[i])
				if err != nil {
					t.Fatal(err)
				}
				fwd, err := compile.JacobianWith(s.y, s.xs[i], compile.Forward)
				if err != nil {
					t.Fatal(err)
				}
				outs = append(outs, jac, sp.Values, fwd)
				sparse = append(sparse, sp)
			}
			vals := s.eval(t, c, outs, 0)
			for k, sp := range sparse {
				dense, got := vals[3*k], sp.Pattern.Dense(vals[3*k+1])
				p := sp.Pattern
				for e, v := range dense {
					if v != 0 && !p.Has(e/p.Columns, e%p.Columns) {
						t.Fatalf("input %d: Jacobian entry (%d, %d) = %v is outside the pattern", s.wrt[k], e/p.Columns, e%p.Columns, v)
					}
				}
				if e, ok := closeTo(got, dense, 1e-12, 1e-9); !ok {
					t.Fatalf("input %d: sparse Jacobian entry %d is %v, dense %v", s.wrt[k], e, got[e], dense[e])
				}
				if e, ok := closeTo(vals[3*k+2], dense, 1e-12, 1e-9); !ok {
					t.Fatalf("input %d: forward-mode Jacobian entry %d is %v, reverse mode's %v", s.wrt[k], e, vals[3*k+2][e], dense[e])
				}
			}
		})
	}
}
