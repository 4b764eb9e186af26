package compile

// allocslots gives every value that has no slot yet a slot of its own. It
// is the whole plan when the memory pass is switched off: the simplest
// one, and the one to compare a sharing plan against.
func allocslots(f *function) error {
	n := 0
	for _, v := range f.values {
		n = max(n, v.slot+1)
	}
	for _, v := range f.values {
		if v.slot < 0 {
			v.slot = n
			n++
		}
	}
	return nil
}
