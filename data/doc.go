// Package data holds training data in memory and feeds it to a model in
// batches: a Tensors data set is a list of named columns (features,
// labels) of float or integer tensors that share their leading (row) size.
// It splits and shuffles with seeded generators, so a seed always gives the
// same order, and copies batch after batch into tensors the caller (or a
// Loader) owns, without allocating. The last batch of an epoch holds the
// rows that are left, fewer than the others when the size does not divide
// the data set: vm.Runner runs a model at that size too.
//
// Readers load the formats data sets come in: IDX (MNIST, Fashion-MNIST),
// CSV, NumPy's NPY and NPZ. They bound what they allocate by the data the
// file holds, whatever its header claims, and return errors naming the
// file, never panics, on corrupt input. Every size, a header's or a
// caller's, is checked against graph.MemoryLimit before anything is
// allocated: asking for too much is an error, not a process killed. Progress draws a progress bar with
// the loss and the throughput on a terminal and writes one plain line per
// epoch elsewhere.
package data
