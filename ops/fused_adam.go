package ops

import "github.com/nabla-go/nabla/internal/kernel/vek"

// fusedAdam is where a fused op whose expression is Adam's step (as
// nn.Adam and nn.AdamW build it, with or without weight decay) finds its
// operands: it then runs as one pass of vek.Adam over the elements, which
// reads each input and writes each output once and keeps every
// intermediate in registers, with the same operations in the same order,
// so the same bits.
type fusedAdam struct {
	p, g, m, v           int // the inputs of the outputs' size
	stepSize, corr, eps  int // the inputs of one element (corr -1: none)
	decay                int // and the decay's factor, with a decay
	p1, m1, v1           int // the outputs
	beta1, c1, beta2, c2 float64
	mode                 vek.AdamDecay
}

// OnePass names the kernel that computes the fused op's whole expression
// in one pass over the elements ("Adam", "Adam+L2" or "AdamW" for Adam's
// step without weight decay, with L2 decay or decoupled decay), or is ""
// when the op runs its steps a block at a time.
func (op *FusedOp) OnePass() string {
	if op.adam == nil {
		return ""
	}
	return [...]string{vek.NoDecay: "Adam", vek.L2Decay: "Adam+L2", vek.DecoupledDecay: "AdamW"}[op.adam.mode]
}

// adamSteps is the number of steps of Adam's expression without decay.
const adamSteps = 13

// matchAdam recognises Adam's step among op's steps:
//
//	m1 = Scale(m, beta1) + Scale(g, c1)
//	v1 = Scale(v, beta2) + Scale(Square(g), c2)
//	p1 = p - stepSize·(m1 / (Sqrt(v1)/corr + eps))
//
// or with Sqrt(v1) for Sqrt(v1)/corr (AdamConfig.FoldCorrection's form,
// run as a correction of 1), with p, g, m and v distinct inputs of the
// outputs' size, stepSize, corr and eps inputs of one element, m1, v1 and p1 the outputs and no other
// step; or with g + p·decay for g (L2 decay), or p·decay for p in p1's
// difference (decoupled decay), decay an input of one element.
func matchAdam(op *FusedOp) *fusedAdam {
	n := len(op.inSizes)
	if len(op.outputs) != 3 || n < 6 || n > 8 || len(op.steps) > adamSteps+2 {
		return nil
	}
	mt := adamMatcher{op: op, n: n}
	var a fusedAdam
	for k := range op.outputs {
		if mt.fit(n+op.outputs[k], &a) {
			a.p1 = k
			break
		}
	}
	steps, inputs := adamSteps, 7
	switch a.mode {
	case vek.L2Decay:
		steps, inputs = adamSteps+2, 8
	case vek.DecoupledDecay:
		steps, inputs = adamSteps+1, 8
	}
	scalars := []int{a.stepSize, a.eps}
	if a.corr >= 0 {
		scalars = append(scalars, a.corr)
	} else {
		steps, inputs = steps-1, inputs-1
	}
	mt.ok = mt.ok && len(mt.seen) == steps && n == inputs && len(op.steps) == steps
	full := []int{a.p, a.g, a.m, a.v}
	for i, x := range full {
		for _, y := range full[i+1:] {
			mt.ok = mt.ok && x != y
		}
		mt.ok = mt.ok && op.inSizes[x] == op.size
	}
	if a.mode != vek.NoDecay {
		scalars = append(scalars, a.decay)
	}
	for _, x := range scalars {
		mt.ok = mt.ok && op.inSizes[x] == 1
	}
	if !mt.ok {
		return nil
	}
	return &a
}

// adamMatcher walks a fused op's expression from an output: each method
// checks that operand x is what it expects and returns its operands.
type adamMatcher struct {
	op   *FusedOp
	n    int
	seen map[int]bool // steps matched
	ok   bool
}

// fit matches p1's expression at operand x, filling a; mt.ok reports it.
func (mt *adamMatcher) fit(x int, a *fusedAdam) bool {
	mt.ok, mt.seen = true, map[int]bool{}
	*a = fusedAdam{}
	base, r := mt.bin(x, subKind)
	if mt.isStep(base) { // AdamW: p·decay
		p, decay := mt.bin(base, mulKind)
		a.p, a.decay, a.mode = mt.input(p), mt.input(decay), vek.DecoupledDecay
	} else {
		a.p = mt.input(base)
	}
	s, q := mt.bin(r, mulKind)
	a.stepSize = mt.input(s)
	m1, d := mt.bin(q, divKind)
	t, eps := mt.bin(d, addKind)
	a.eps = mt.input(eps)
	root, corr := t, -1
	if !mt.isUnary(t, sqrtKind) {
		root, corr = mt.bin(t, divKind)
		corr = mt.input(corr)
	}
	a.corr = corr
	v1 := mt.unary(root, sqrtKind)
	a.m1, a.v1 = mt.output(m1), mt.output(v1)
	sm, sg := mt.bin(m1, addKind)
	var g, g2 int
	a.m, a.beta1 = mt.scale(sm)
	a.m = mt.input(a.m)
	g, a.c1 = mt.scale(sg)
	sv, sq := mt.bin(v1, addKind)
	a.v, a.beta2 = mt.scale(sv)
	a.v = mt.input(a.v)
	g2, a.c2 = mt.scale(sq)
	mt.ok = mt.ok && mt.unary(g2, squareKind) == g
	if mt.isStep(g) && a.mode == vek.NoDecay { // Adam with L2 decay: g + p·decay
		raw, t := mt.bin(g, addKind)
		p, decay := mt.bin(t, mulKind)
		mt.ok = mt.ok && mt.input(p) == a.p
		g, a.decay, a.mode = raw, mt.input(decay), vek.L2Decay
	}
	a.g = mt.input(g)
	return mt.ok
}

// isStep reports whether operand x is a step's result.
func (mt *adamMatcher) isStep(x int) bool { return x >= mt.n }

// isUnary reports whether operand x is a unary step of kind k, without
// matching it.
func (mt *adamMatcher) isUnary(x int, k unaryKind) bool {
	if !mt.isStep(x) || x >= mt.n+len(mt.op.steps) {
		return false
	}
	u, ok := mt.op.steps[x-mt.n].opUnary()
	return ok && u.kind == k
}

// step returns the step operand x is the result of, or nil.
func (mt *adamMatcher) step(x int) *FusedStep {
	if !mt.ok || x < mt.n || x >= mt.n+len(mt.op.steps) {
		mt.ok = false
		return nil
	}
	mt.seen[x] = true
	return &mt.op.steps[x-mt.n]
}

func (mt *adamMatcher) bin(x int, k binaryKind) (int, int) {
	s := mt.step(x)
	if b, ok := s.opBinary(); ok && b.kind == k {
		return s.Args[0], s.Args[1]
	}
	mt.ok = false
	return 0, 0
}

func (mt *adamMatcher) unary(x int, k unaryKind) int {
	s := mt.step(x)
	if u, ok := s.opUnary(); ok && u.kind == k {
		return s.Args[0]
	}
	mt.ok = false
	return 0
}

// scale returns a Scale step's operand and constant.
func (mt *adamMatcher) scale(x int) (int, float64) {
	s := mt.step(x)
	if u, ok := s.opUnary(); ok && u.kind == scaleKind {
		return s.Args[0], u.c
	}
	mt.ok = false
	return 0, 0
}

// input returns the input operand x is (0 if it is none).
func (mt *adamMatcher) input(x int) int {
	if x < 0 || x >= mt.n {
		mt.ok = false
		return 0
	}
	return x
}

// output returns the output operand x is the result of (0 if none).
func (mt *adamMatcher) output(x int) int {
	for k, j := range mt.op.outputs {
		if x == mt.n+j {
			return k
		}
	}
	mt.ok = false
	return 0
}

func (s *FusedStep) opBinary() (binary, bool) {
	if s == nil {
		return binary{}, false
	}
	b, ok := s.Op.(binary)
	return b, ok
}

func (s *FusedStep) opUnary() (unary, bool) {
	if s == nil {
		return unary{}, false
	}
	u, ok := s.Op.(unary)
	return u, ok
}

// runAdam computes elements [lo, hi) of a fused Adam step's outputs.
func runAdam[T float](a *fusedAdam, outs, ins [][]T, lo, hi int) {
	k := vek.AdamScalars[T]{
		Beta1: T(a.beta1), OneMinusBeta1: T(a.c1), Beta2: T(a.beta2), OneMinusBeta2: T(a.c2),
		StepSize: ins[a.stepSize][0], Correction: 1, Eps: ins[a.eps][0],
		Mode: a.mode,
	}
	if a.corr >= 0 {
		k.Correction = ins[a.corr][0]
	}
	if a.mode != vek.NoDecay {
		k.Decay = ins[a.decay][0]
	}
	vek.Adam(outs[a.p1][lo:hi], outs[a.m1][lo:hi], outs[a.v1][lo:hi],
		ins[a.p][lo:hi], ins[a.g][lo:hi], ins[a.m][lo:hi], ins[a.v][lo:hi], &k)
}
