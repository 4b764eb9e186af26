package compile

import (
	"fmt"
	"slices"

	"github.com/nabla-go/nabla/graph"
)

// StarColor colours the columns of the square pattern p of a symmetric
// matrix (a Hessian's) with a star colouring of its adjacency graph, the
// graph on the columns with an edge i–j for each off-diagonal entry (i, j)
// or (j, i): adjacent columns get different colours, and every path on
// four vertices uses at least three. Each off-diagonal entry is then alone
// in its colour in its row or in its column, so one product per colour
// recovers every entry directly, by symmetry where need be. The algorithm
// is greedy, columns in order, keeping the two-coloured stars and their
// centres as Gebremedhin, Tarafdar, Manne and Pothen (2007) do, in time
// proportional to Σ over columns of the neighbours' degrees. A band of
// half-width b takes 2b+1 colours, as with ColorColumns (for b ≤ 3 no star
// colouring does better); an arrowhead takes two, where ColorColumns needs
// one per column. It returns each column's colour and the number of
// colours, or an error if p is not a square, well-formed pattern.
func StarColor(p *Pattern) (colors []int, n int, err error) {
	if err := checkPattern(p); err != nil {
		return nil, 0, err
	}
	if p.Rows != p.Columns {
		return nil, 0, &graph.Error{Op: "StarColor", Err: fmt.Errorf("the pattern is %d×%d, not square", p.Rows, p.Columns), Site: graph.CallerSite()}
	}
	start, adj := symmetricAdjacency(p)
	colors, n = starColor(start, adj)
	return colors, n, nil
}

// checkPattern reports a pattern whose arrays do not describe a CSR matrix
// of its size.
func checkPattern(p *Pattern) error {
	fail := func(format string, args ...any) error {
		return &graph.Error{Op: "StarColor", Err: fmt.Errorf(format, args...), Site: graph.CallerSite()}
	}
	switch {
	case p == nil:
		return fail("nil pattern")
	case p.Rows < 0 || p.Columns < 0:
		return fail("the pattern is %d×%d", p.Rows, p.Columns)
	case len(p.RowStart) != p.Rows+1:
		return fail("%d row starts for %d rows", len(p.RowStart), p.Rows)
	case p.RowStart[0] != 0 || p.RowStart[p.Rows] != len(p.Cols):
		return fail("the row starts run from %d to %d over %d entries", p.RowStart[0], p.RowStart[p.Rows], len(p.Cols))
	}
	for i := range p.Rows {
		lo, hi := p.RowStart[i], p.RowStart[i+1]
		if lo > hi || hi > len(p.Cols) {
			return fail("row %d runs from %d to %d over %d entries", i, lo, hi, len(p.Cols))
		}
		for k := lo; k < hi; k++ {
			if j := p.Cols[k]; j < 0 || j >= p.Columns || k > lo && j <= p.Cols[k-1] {
				return fail("row %d: column %d is out of range or out of order", i, j)
			}
		}
	}
	return nil
}

// symmetricAdjacency returns the adjacency graph of the square pattern p
// in CSR form: vertex v's neighbours, in increasing order, are
// adj[start[v]:start[v+1]], one for each off-diagonal entry (v, w) or
// (w, v) of p.
func symmetricAdjacency(p *Pattern) (start, adj []int) {
	lists := make([][]int, p.Columns)
	for i := range p.Rows {
		for _, j := range p.Cols[p.RowStart[i]:p.RowStart[i+1]] {
			if i != j {
				lists[i] = append(lists[i], j)
				lists[j] = append(lists[j], i)
			}
		}
	}
	start = make([]int, p.Columns+1)
	for v, l := range lists {
		slices.Sort(l)
		l = slices.Compact(l)
		adj = append(adj, l...)
		start[v+1] = len(adj)
	}
	return start, adj
}

// starColor star-colours the graph (start, adj), vertices in order.
//
// Every edge between coloured vertices belongs to one two-coloured star,
// a connected component of the subgraph of two colour classes (in a star
// colouring these are stars); star[k] is the star of the edge at adj
// position k and hub[s] is star s's centre, or -1 while s is one edge.
// Colouring v with c makes a two-coloured path on four vertices exactly
// when, for a coloured neighbour w of v and a coloured neighbour x ≠ v of
// w with colour c,
//   - x is the centre of the star of the edge w–x (x has another neighbour
//     of w's colour: v–w–x–y), or
//   - v has another neighbour of w's colour (w'–v–w–x),
//
// so those colours, and the neighbours', are forbidden. Then each new edge
// v–w joins the star of w's edge to a neighbour of colour c (w becomes
// its centre), or the star of v's edge to an earlier neighbour of w's
// colour (v becomes its centre), or starts a star; never both, as that
// would be a two-coloured path.
func starColor(start, adj []int) (colors []int, n int) {
	nv := len(start) - 1
	colors = make([]int, nv)
	for v := range colors {
		colors[v] = -1
	}
	star := make([]int, len(adj))
	var hub []int
	// Per colour, stamped with v+1 while v is coloured: forbidden, the
	// number of v's neighbours of the colour, and the star v's first edge
	// to the colour started.
	var forbidden, countAt, count, firstAt, first []int
	for v := range nv {
		stamp := v + 1
		nbrs := adj[start[v]:start[v+1]]
		for _, w := range nbrs {
			if c := colors[w]; c >= 0 {
				forbidden[c] = stamp
				if countAt[c] != stamp {
					countAt[c], count[c] = stamp, 0
				}
				count[c]++
			}
		}
		for _, w := range nbrs {
			a := colors[w]
			if a < 0 {
				continue
			}
			repeated := count[a] > 1
			for l := start[w]; l < start[w+1]; l++ {
				x := adj[l]
				if x != v && colors[x] >= 0 && (repeated || hub[star[l]] == x) {
					forbidden[colors[x]] = stamp
				}
			}
		}
		c := 0
		for c < len(forbidden) && forbidden[c] == stamp {
			c++
		}
		if c == len(forbidden) {
			forbidden, countAt, count = append(forbidden, 0), append(countAt, 0), append(count, 0)
			firstAt, first = append(firstAt, 0), append(first, 0)
		}
		colors[v] = c
		n = max(n, c+1)
		for k := start[v]; k < start[v+1]; k++ {
			w := adj[k]
			a := colors[w]
			if a < 0 {
				continue
			}
			s, back := -1, -1
			for l := start[w]; l < start[w+1]; l++ {
				switch x := adj[l]; {
				case x == v:
					back = l
				case s < 0 && colors[x] == c:
					s = star[l]
				}
			}
			switch {
			case s >= 0:
				hub[s] = w
			case firstAt[a] == stamp:
				s = first[a]
				hub[s] = v
			default:
				s = len(hub)
				hub = append(hub, -1)
				firstAt[a], first[a] = stamp, s
			}
			star[k], star[back] = s, s
		}
	}
	return colors, n
}

// symmetricGather returns, for each entry (i, j) of the square pattern p
// in order, its position in the compressed products of a symmetric
// matrix, colour-major (product c's row i at c·Rows + i): row i of
// colors[j]'s product when j is alone in its colour among row i's
// columns, else row j of colors[i]'s product (the entry (j, i), equal by
// symmetry), which a star colouring makes alone in its own.
func symmetricGather(p *Pattern, colors []int, nc int) []int64 {
	m := p.Rows
	countAt, count := make([]int, nc), make([]int, nc)
	at := make([]int64, 0, p.NNZ())
	for i := range m {
		row := p.Cols[p.RowStart[i]:p.RowStart[i+1]]
		for _, j := range row {
			c := colors[j]
			if countAt[c] != i+1 {
				countAt[c], count[c] = i+1, 0
			}
			count[c]++
		}
		for _, j := range row {
			if count[colors[j]] == 1 {
				at = append(at, int64(colors[j]*m+i))
			} else {
				at = append(at, int64(colors[i]*m+j))
			}
		}
	}
	return at
}
