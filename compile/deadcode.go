package compile

// deadcode keeps only the values that outputs and updates need. All
// outputs of a multi-output op stay together: one instruction writes them.
func deadcode(f *function) error {
	live := make(map[*value]bool, len(f.values))
	stack := append([]*value(nil), f.outputs...)
	for _, u := range f.updates {
		stack = append(stack, u.param, u.expr)
	}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if live[v] {
			continue
		}
		live[v] = true
		stack = append(stack, v.args...)
		stack = append(stack, v.group...)
	}
	kept := f.values[:0]
	for _, v := range f.values {
		if live[v] {
			kept = append(kept, v)
		}
	}
	clear(f.values[len(kept):])
	f.values = kept
	return nil
}
