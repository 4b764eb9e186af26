package compile

// allocslots gives every value a slot of its own: the simplest memory
// plan, and the one to compare a sharing plan against.
func allocslots(f *function) error {
	for i, v := range f.values {
		v.slot = i
	}
	return nil
}
