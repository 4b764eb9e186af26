package compile

// pass is one step of compilation over a function.
type pass struct {
	name     string
	fn       func(*function) error
	required bool // cannot be switched off
}

// passes run in this order. Each is a small function in a file of its
// own; WithoutPass switches off the optional ones.
var passes = [...]pass{
	{name: "deadcode", fn: deadcode},
	{name: "constfold", fn: constfold},
	{name: "simplify", fn: simplify},
	{name: "cse", fn: cse},
	{name: "solve", fn: solve},
	{name: "lushare", fn: lushare},
	{name: "constlayout", fn: constlayout},
	{name: "matmuladd", fn: matmuladd},
	{name: "readthrough", fn: readthrough},
	{name: "late deadcode", fn: deadcode},
	{name: "sharedmatmul", fn: sharedmatmul},
	{name: "prune", fn: prune},
	{name: "decompshare", fn: decompshare},
	{name: "fuse", fn: fuse},
	{name: "inplace", fn: inplace},
	{name: "memory", fn: memory},
	{name: "allocslots", fn: allocslots, required: true},
}

// passOrder lists constraints on the order of passes: a must run before b
// (when both run). A test checks the table against it.
var passOrder = [...]constraint{
	// Fold only what is needed: dead code costs time and may not even fold.
	{"deadcode", "constfold"},
	// Simplification sees folded constants: x·(2-1) is x·1.
	{"constfold", "simplify"},
	// Simplification exposes equal expressions: -(-x)·y and x·y.
	{"simplify", "cse"},
	// Products with an inverse become solves once equal inverses are
	// merged (their readers counted together), before constlayout and
	// matmuladd take the products over; the inverses are left for late
	// deadcode.
	{"cse", "solve"},
	{"solve", "constlayout"},
	{"solve", "matmuladd"},
	{"solve", "late deadcode"},
	{"solve", "fuse"},
	{"solve", "memory"},
	// Matrices are factorised once for all their readers once equal
	// readers are merged and products with an inverse are solves; the
	// factors are values that fusion, in-place updates and memory
	// planning see.
	{"cse", "lushare"},
	{"solve", "lushare"},
	{"lushare", "late deadcode"},
	{"lushare", "fuse"},
	{"lushare", "inplace"},
	{"lushare", "memory"},
	// Constants are transposed for the products that remain, after
	// folding and merging, before matmuladd copies the products' flags;
	// the constants they replace are left for late deadcode.
	{"cse", "constlayout"},
	{"constfold", "constlayout"},
	{"constlayout", "matmuladd"},
	{"constlayout", "late deadcode"},
	// Merged products are read once more: merge them first. The
	// products matmuladd absorbs are left for late deadcode.
	{"cse", "matmuladd"},
	{"matmuladd", "late deadcode"},
	// Products sharing a matrix are computed together once merged,
	// with the constants as the kernels read them and the biases
	// absorbed and the products they replace dead; fusion, in-place
	// updates and memory see the instructions that result.
	{"cse", "sharedmatmul"},
	{"late deadcode", "sharedmatmul"},
	{"constlayout", "sharedmatmul"},
	{"matmuladd", "sharedmatmul"},
	{"sharedmatmul", "fuse"},
	{"sharedmatmul", "inplace"},
	{"sharedmatmul", "memory"},
	// Reductions read through layout ops that only they read, once equal
	// layout ops are merged (a merged one has several readers, and its copy
	// is made anyway); the layout values are left for late deadcode.
	{"cse", "readthrough"},
	{"readthrough", "late deadcode"},
	{"readthrough", "fuse"},
	// Folding, simplification and merging leave values nothing reads.
	{"constfold", "late deadcode"},
	{"simplify", "late deadcode"},
	{"cse", "late deadcode"},
	// Fuse what remains: a dead value reading a member of a group would
	// close it, equal expressions are merged first (a fused group hides its
	// values from cse), and a product's sum is matmuladd's.
	{"late deadcode", "fuse"},
	{"cse", "fuse"},
	{"matmuladd", "fuse"},
	// Prune the outputs that remain unread, and size their memory after.
	{"late deadcode", "prune"},
	{"constfold", "prune"},
	{"prune", "memory"},
	// Plan memory for the values that remain, and only for them; values
	// that only their fused group reads need none.
	{"fuse", "memory"},
	{"late deadcode", "memory"},
	{"constfold", "memory"},
	{"simplify", "memory"},
	{"cse", "memory"},
	// Updates are computed in their parameters' slots once the
	// instructions are what they will be: fused, and none merged away.
	{"fuse", "inplace"},
	{"late deadcode", "inplace"},
	{"inplace", "memory"},
	// Parts of a decomposition share one factorisation once dead parts are
	// gone (a group keeps all its outputs), before memory is planned for
	// the group.
	{"cse", "decompshare"},
	{"late deadcode", "decompshare"},
	{"decompshare", "inplace"},
	{"decompshare", "memory"},
	// allocslots places what memory did not place.
	{"memory", "allocslots"},
}

type constraint struct{ a, b string }
