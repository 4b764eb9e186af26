package compile

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"weak"

	"github.com/nabla-go/nabla/graph"
)

// A program is meant to be built once and run many times. Building the
// model, differentiating it or compiling it again at every step, as one
// would in PyTorch's eager mode, grows the graph without end: every step
// slower than the last and memory never freed. Compile notices a graph
// that keeps growing between compilations and says so, once per graph,
// through Warn.

// Warn receives the compiler's warnings. It writes them to standard error;
// set it to route them elsewhere (a logger, a test), or to a function
// that does nothing to silence them. Set it before compiling, not while
// compilations run.
var Warn = func(msg string) { fmt.Fprintln(os.Stderr, msg) }

// A graph is reported once it has been compiled growthCompiles times and
// has grown, since its first compilation, by growthNodes nodes and to
// twice its size then.
const (
	growthCompiles = 5
	growthNodes    = 1000
)

// growth is what Compile remembers of a graph: weakly, so that a graph is
// forgotten once its user drops it.
type growth struct {
	compiles int
	first    int // nodes at the first compilation
	warned   bool
}

var (
	growthMu sync.Mutex
	growths  = map[weak.Pointer[graph.Graph]]*growth{}
)

// noteCompile records a compilation of g and warns when g keeps growing.
func noteCompile(g *graph.Graph) {
	n := len(g.Nodes())
	key := weak.Make(g)
	growthMu.Lock()
	r, ok := growths[key]
	if !ok {
		r = &growth{first: n}
		growths[key] = r
		runtime.AddCleanup(g, forgetGraph, key)
	}
	r.compiles++
	warn := !r.warned && r.compiles >= growthCompiles && n >= 2*r.first && n-r.first >= growthNodes
	if warn {
		r.warned = true
	}
	compiles, first := r.compiles, r.first
	growthMu.Unlock()
	if warn {
		Warn(fmt.Sprintf("nabla: a graph compiled %d times has grown from %d to %d nodes: "+
			"build the model, its gradients and its updates once, compile once, and Run the machine "+
			"at every step (docs/define-once.md)", compiles, first, n))
	}
}

func forgetGraph(key weak.Pointer[graph.Graph]) {
	growthMu.Lock()
	delete(growths, key)
	growthMu.Unlock()
}
