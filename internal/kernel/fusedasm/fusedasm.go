// Package fusedasm is the assembly kernel of package ops' fused
// elementwise instructions: it runs a block's steps, each over the whole
// block, with the instructions the Go loops compile to, so that every
// element gets the bits the unfused ops give. It is a package of its own
// because Go assembly cannot sit in a package that uses cgo, as ops does
// when built with -tags openblas.
//
// Package ops owns the steps' encoding (its fusedCode records and
// opcodes) and tests that it matches what the assembly reads.
package fusedasm

// RecordSize is the size in bytes of one step's record: an opcode (byte
// 0), the result's location (int32 at 4), three operands' locations
// (int32s at 8, 12, 16), Scale's constant as a float32 (at 20) and a
// float64 (at 24), and 8 bytes the kernel does not read.
const RecordSize = 40

// Record is one step, as the kernel reads it (see RecordSize).
type Record [RecordSize]byte
