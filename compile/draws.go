package compile

import (
	"fmt"

	"github.com/nabla-go/nabla/graph"
)

// WithFixedDraws lets the program's random ops draw at a step parameter
// that none of its updates advances, so that every run repeats the same
// draws: for finite differences, which compare runs that must see the
// same noise, and for one-off evaluations. Without it such a program is
// an error, since a forgotten gen.Updates() would silently repeat the
// noise of every run.
func WithFixedDraws() Option { return func(c *config) { c.fixedDraws = true } }

// checkDraws returns an error for the first built random op (a
// graph.Drawer) that the outputs and updates need whose step is a
// parameter that no update advances.
func checkDraws(outputs []*graph.Node, updates [][2]*graph.Node) error {
	updated := map[*graph.Node]bool{}
	roots := append([]*graph.Node(nil), outputs...)
	for _, u := range updates {
		updated[u[0]] = true
		roots = append(roots, u[1])
	}
	seen := map[*graph.Node]bool{}
	var first, step *graph.Node
	for len(roots) > 0 {
		n := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		if n == nil || seen[n] {
			continue
		}
		seen[n] = true
		in := n.Inputs()
		if d, ok := n.Op().(graph.Drawer); ok && n.Kind() == graph.KindOp {
			i := d.DrawStep()
			if i >= 0 && i < len(in) && in[i].Kind() == graph.KindParam && !updated[in[i]] && (first == nil || n.ID() < first.ID()) {
				first, step = n, in[i]
			}
		}
		roots = append(roots, in...)
	}
	if first == nil {
		return nil
	}
	return fmt.Errorf("nabla: Compile: %v built at %s draws at step %q, a parameter that no update of the program advances, so every run would repeat its draws: pass gen.Updates() (a model's: nn.TrainingUpdates or nn.StateUpdates) to compile.WithUpdates, or compile.WithFixedDraws() to repeat the same draws on purpose",
		first, first.Site(), step.Name())
}
