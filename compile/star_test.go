package compile_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nabla-go/nabla/compile"
	"github.com/nabla-go/nabla/graph"
	"github.com/nabla-go/nabla/ops"
)

// patternOf is the n×n pattern of the entries where has is true.
func patternOf(n int, has func(i, j int) bool) *compile.Pattern {
	p := &compile.Pattern{Rows: n, Columns: n, RowStart: make([]int, n+1)}
	for i := range n {
		for j := range n {
			if has(i, j) {
				p.Cols = append(p.Cols, j)
			}
		}
		p.RowStart[i+1] = len(p.Cols)
	}
	return p
}

func banded(n, b int) *compile.Pattern {
	return patternOf(n, func(i, j int) bool { return j >= i-b && j <= i+b })
}

// arrowhead is the pattern of a dense first row and column and the
// diagonal.
func arrowhead(n int) *compile.Pattern {
	return patternOf(n, func(i, j int) bool { return i == 0 || j == 0 || i == j })
}

// randomSymmetric is an n×n pattern with each off-diagonal pair present
// (on both sides, or, with oneSided, on one chosen at random) with
// probability density, and the diagonal if diag.
func randomSymmetric(rng *rand.Rand, n int, density float64, diag, oneSided bool) *compile.Pattern {
	has := make([]bool, n*n)
	for i := range n {
		has[i*n+i] = diag
		for j := range i {
			if rng.Float64() < density {
				switch {
				case !oneSided:
					has[i*n+j], has[j*n+i] = true, true
				case rng.IntN(2) == 0:
					has[i*n+j] = true
				default:
					has[j*n+i] = true
				}
			}
		}
	}
	return patternOf(n, func(i, j int) bool { return has[i*n+j] })
}

// starViolation checks colors against p's adjacency graph (an edge i–j
// for each off-diagonal entry (i, j) or (j, i)) by enumerating its paths:
// the colours must lie in [0, n) and all be used, adjacent vertices must
// differ, and no path a–b–c–d may alternate two colours.
func starViolation(p *compile.Pattern, colors []int, n int) error {
	if len(colors) != p.Columns {
		return fmt.Errorf("%d colours for %d columns", len(colors), p.Columns)
	}
	used := make([]bool, n)
	for v, c := range colors {
		if c < 0 || c >= n {
			return fmt.Errorf("vertex %d has colour %d of %d", v, c, n)
		}
		used[c] = true
	}
	for c, u := range used {
		if !u {
			return fmt.Errorf("colour %d of %d is unused", c, n)
		}
	}
	nbr := make([]map[int]bool, p.Columns)
	for v := range nbr {
		nbr[v] = map[int]bool{}
	}
	for i := range p.Rows {
		for _, j := range p.Cols[p.RowStart[i]:p.RowStart[i+1]] {
			if i != j {
				nbr[i][j], nbr[j][i] = true, true
			}
		}
	}
	for b := range nbr {
		for c := range nbr[b] {
			if colors[b] == colors[c] {
				return fmt.Errorf("adjacent %d and %d share colour %d", b, c, colors[b])
			}
			for a := range nbr[b] {
				for d := range nbr[c] {
					if a != c && d != b && a != d && colors[a] == colors[c] && colors[b] == colors[d] {
						return fmt.Errorf("path %d–%d–%d–%d has two colours", a, b, c, d)
					}
				}
			}
		}
	}
	return nil
}

// The checker itself rejects what it should.
func TestStarViolationChecker(t *testing.T) {
	path := banded(4, 1)
	for _, c := range []struct {
		colors []int
		n      int
		bad    bool
	}{
		{[]int{0, 1, 0, 1}, 2, true},  // a two-coloured path
		{[]int{0, 0, 1, 2}, 3, true},  // adjacent, same colour
		{[]int{0, 1, 0, 2}, 4, true},  // colour 3 unused
		{[]int{0, 1, 0, 2}, 3, false}, // a star colouring
		{[]int{0, 1, 2, 0}, 3, false}, // so is this
	} {
		if err := starViolation(path, c.colors, c.n); (err != nil) != c.bad {
			t.Errorf("%v: checker says %v", c.colors, err)
		}
	}
}

func TestStarColorRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	fewer, more := 0, 0
	for trial := range 400 {
		n := 1 + rng.IntN(40)
		p := randomSymmetric(rng, n, rng.Float64()*0.4, trial%3 != 0, trial%5 == 0)
		colors, nc, err := compile.StarColor(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := starViolation(p, colors, nc); err != nil {
			t.Fatalf("trial %d (n = %d, %d entries): %v", trial, n, p.NNZ(), err)
		}
		if _, n1 := compile.ColorColumns(p); nc < n1 {
			fewer++
		} else if nc > n1 {
			more++
		}
	}
	t.Logf("star colouring used fewer colours than ColorColumns in %d of 400 patterns, more in %d", fewer, more)
	if fewer < 100 {
		t.Errorf("star colouring used fewer colours than ColorColumns in only %d of 400 random patterns", fewer)
	}
}

// A band of half-width b takes 2b+1 colours, the fewest a star colouring
// can have for b ≤ 3 (a path needs three; on 14 vertices, exhaustive
// search finds none of half-width 2 with four colours or 3 with six); a
// tridiagonal pattern of three columns takes two.
func TestStarColorBanded(t *testing.T) {
	for _, c := range []struct{ n, b, want int }{
		{1, 1, 1}, {2, 1, 2}, {3, 1, 2}, {4, 1, 3}, {50, 1, 3}, {10000, 1, 3},
		{14, 2, 5}, {10000, 2, 5}, {200, 3, 7},
	} {
		p := banded(c.n, c.b)
		colors, nc, err := compile.StarColor(p)
		if err != nil {
			t.Fatal(err)
		}
		if nc != c.want {
			t.Errorf("n = %d, half-bandwidth %d: %d colours, want %d", c.n, c.b, nc, c.want)
		}
		if c.n <= 200 {
			if err := starViolation(p, colors, nc); err != nil {
				t.Errorf("n = %d, half-bandwidth %d: %v", c.n, c.b, err)
			}
		}
	}
}

// An arrowhead takes two colours, where ColorColumns needs one per column.
func TestStarColorArrowhead(t *testing.T) {
	for _, n := range []int{2, 3, 10, 1000} {
		p := arrowhead(n)
		colors, nc, err := compile.StarColor(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := starViolation(p, colors, nc); err != nil {
			t.Fatal(err)
		}
		_, n1 := compile.ColorColumns(p)
		if nc != 2 || n1 != n {
			t.Errorf("n = %d: star colouring %d colours, ColorColumns %d; want 2 and %d", n, nc, n1, n)
		}
	}
}

// Blocks on the diagonal (dense, tridiagonal, arrowheads) are coloured
// independently: the colours are the largest any block needs.
func TestStarColorBlockDiagonal(t *testing.T) {
	type block struct {
		size int
		has  func(i, j int) bool
	}
	dense := func(i, j int) bool { return true }
	tri := func(i, j int) bool { return j >= i-1 && j <= i+1 }
	arrow := func(i, j int) bool { return i == 0 || j == 0 || i == j }
	for _, c := range []struct {
		blocks []block
		want   int
	}{
		{[]block{{3, dense}, {5, dense}, {2, dense}}, 5},
		{[]block{{30, tri}, {3, dense}, {40, arrow}}, 3},
		{[]block{{40, arrow}, {6, arrow}, {2, dense}}, 2},
		{[]block{{4, dense}, {30, tri}, {20, arrow}, {4, dense}}, 4},
	} {
		var blockOf, start []int // each vertex's block; each block's first vertex
		for b, bl := range c.blocks {
			start = append(start, len(blockOf))
			for range bl.size {
				blockOf = append(blockOf, b)
			}
		}
		p := patternOf(len(blockOf), func(i, j int) bool {
			b := blockOf[i]
			return blockOf[j] == b && c.blocks[b].has(i-start[b], j-start[b])
		})
		colors, nc, err := compile.StarColor(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := starViolation(p, colors, nc); err != nil {
			t.Fatal(err)
		}
		if nc != c.want {
			t.Errorf("blocks %v: %d colours, want %d", c.blocks, nc, c.want)
		}
	}
}

func TestStarColorErrors(t *testing.T) {
	good := banded(4, 1)
	for _, c := range []struct {
		name string
		p    *compile.Pattern
	}{
		{"nil", nil},
		{"not square", &compile.Pattern{Rows: 2, Columns: 3, RowStart: []int{0, 1, 2}, Cols: []int{0, 2}}},
		{"short row starts", &compile.Pattern{Rows: 4, Columns: 4, RowStart: good.RowStart[:4], Cols: good.Cols}},
		{"past the entries", &compile.Pattern{Rows: 4, Columns: 4, RowStart: []int{0, 2, 5, 8, 11}, Cols: good.Cols}},
		{"column out of range", &compile.Pattern{Rows: 2, Columns: 2, RowStart: []int{0, 1, 2}, Cols: []int{0, 2}}},
		{"columns out of order", &compile.Pattern{Rows: 2, Columns: 2, RowStart: []int{0, 2, 3}, Cols: []int{1, 0, 1}}},
		{"decreasing row starts", &compile.Pattern{Rows: 2, Columns: 2, RowStart: []int{0, 2, 1}, Cols: []int{0}}},
	} {
		if _, _, err := compile.StarColor(c.p); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// checkSparseHessian compares sh with the dense Hessian of f at x0: every
// entry equal, and no nonzero outside the pattern.
func checkSparseHessian(t *testing.T, f, x *graph.Node, sh *compile.Sparse, x0 []float64) {
	t.Helper()
	dh, err := compile.Hessian(f, x)
	if err != nil {
		t.Fatal(err)
	}
	vals := runAt(t, x, x0, sh.Values, dh)
	n := len(x0)
	got, want := sh.Pattern.Dense(vals[0]), vals[1]
	for e := range want {
		if math.Abs(got[e]-want[e]) > 1e-12*max(1, math.Abs(want[e])) {
			t.Fatalf("entry (%d, %d): sparse %v, dense %v", e/n, e%n, got[e], want[e])
		}
		if want[e] != 0 && !sh.Pattern.Has(e/n, e%n) {
			t.Fatalf("dense entry (%d, %d) = %v is outside the pattern", e/n, e%n, want[e])
		}
	}
}

func randomPoint(rng *rand.Rand, n int) []float64 {
	x0 := make([]float64, n)
	for i := range x0 {
		x0[i] = 2*rng.Float64() - 1
	}
	return x0
}

// f = Σ x₀²·xᵢ² + Σ sin xᵢ has an arrowhead Hessian: two Hessian–vector
// products instead of n.
func TestSparseHessianArrowhead(t *testing.T) {
	const n = 30
	g := graph.New()
	x := g.Input("x", graph.Float64, n)
	x0 := ops.Slice(x, 0, 0, 1)
	f := ops.Add(ops.Sum(ops.Mul(ops.Square(x0), ops.Square(x))), ops.Sum(ops.Sin(x)))
	sh, err := compile.SparseHessian(f, x)
	if err != nil {
		t.Fatal(err)
	}
	if sh.Colors != 2 {
		t.Errorf("%d colours, want 2", sh.Colors)
	}
	checkSparseHessian(t, f, x, sh, randomPoint(rand.New(rand.NewPCG(1, 3)), n))
}

// f = Σ xᵢ·x_{i+n/2} has an empty diagonal: columns i and i+n/2 share no
// row, so ColorColumns' single colour beats the star colouring's two.
func TestSparseHessianBilinear(t *testing.T) {
	const n = 12
	g := graph.New()
	x := g.Input("x", graph.Float64, n)
	f := ops.Sum(ops.Mul(ops.Slice(x, 0, 0, n/2), ops.Slice(x, 0, n/2, n)))
	sh, err := compile.SparseHessian(f, x)
	if err != nil {
		t.Fatal(err)
	}
	if sh.Colors != 1 {
		t.Errorf("%d colours, want 1", sh.Colors)
	}
	checkSparseHessian(t, f, x, sh, randomPoint(rand.New(rand.NewPCG(2, 3)), n))
}

// Random sums of sin(xₐ·x_b), products xₐ·x_b and xᵢ⁴ (so diagonals
// full, partial or empty): the sparse Hessian equals the dense one.
func TestSparseHessianRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for trial := range 12 {
		n := 4 + rng.IntN(14)
		g := graph.New()
		x := g.Input("x", graph.Float64, n)
		el := func(i int) *graph.Node { return ops.Slice(x, 0, i, i+1) }
		var sines, products, quartics []*graph.Node
		for range n + rng.IntN(2*n) {
			a, b := rng.IntN(n), rng.IntN(n)
			if a == b {
				continue
			}
			if rng.IntN(2) == 0 {
				sines = append(sines, ops.Mul(el(a), el(b)))
			} else {
				products = append(products, ops.Mul(el(a), el(b)))
			}
		}
		for i := range n {
			if rng.IntN(3) == 0 {
				quartics = append(quartics, ops.Square(ops.Square(el(i))))
			}
		}
		var f *graph.Node
		add := func(term *graph.Node) {
			if f == nil {
				f = term
			} else {
				f = ops.Add(f, term)
			}
		}
		if len(sines) > 0 {
			add(ops.Sum(ops.Sin(ops.Concat(0, sines...))))
		}
		if len(products) > 0 {
			add(ops.Sum(ops.Concat(0, products...)))
		}
		if len(quartics) > 0 {
			add(ops.Sum(ops.Concat(0, quartics...)))
		}
		sh, err := compile.SparseHessian(f, x)
		if err != nil {
			t.Fatal(err)
		}
		if _, n1 := compile.ColorColumns(sh.Pattern); sh.Colors > n1 {
			t.Errorf("trial %d: %d colours, more than ColorColumns' %d", trial, sh.Colors, n1)
		}
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			checkSparseHessian(t, f, x, sh, randomPoint(rng, n))
		})
	}
}
