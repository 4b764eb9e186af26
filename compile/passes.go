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
	{name: "allocslots", fn: allocslots, required: true},
}
