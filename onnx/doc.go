// Package onnx reads ONNX models into nabla graphs and writes nabla graphs
// as ONNX models.
//
// Import (and ImportFile, ImportProto) builds a model's nodes as ordinary
// nabla nodes, with the input shapes the model declares or those given in
// Options.InputShapes: the result compiles, runs and differentiates like
// any graph. Float initializers become trainable parameters named as in the
// model (or constants, with Options.Frozen); integer ones are constants.
// nabla has no boolean dtype: ONNX's bool values (inputs, constants, the
// results of comparisons, Not, And, Or) are float32 masks holding 0 or 1,
// as nabla's comparisons give; a bool graph input is fed as such a mask.
// Shape computations (Shape, Gather, Concat, Unsqueeze ... of static
// shapes) are computed at import. Each ONNX op has a small importer in a
// table, one file per family (ops_math.go, ops_more.go, ops_shape.go,
// ops_nn.go, ops_index.go, ops_loss.go, ops_resize.go, ops_rnn.go); a model
// with ops outside the table is refused with one error listing them all.
// Beside each importer is the table of its op's attributes (attrs.go):
// a node carrying an attribute its op's table lacks at the model's opset,
// or a value the importer does not implement (MaxPool's storage_order 1,
// Resize's antialias), is refused, naming the attribute and those
// implemented, rather than built as if the attribute were absent.
// Ops nabla has no kernel for are built from others so that they still
// differentiate: RNN, GRU and LSTM are ops.Scan loops, Resize and CumSum
// products with matrices computed at import, GatherElements, OneHot and
// the losses one-hot masks. CONFORMANCE.md lists which of ONNX's backend
// tests pass. Import decodes initializers' raw data in place, so that it
// allocates the weights once, for the parameters (ImportFile reads the
// file first). Models are untrusted input: sizes are checked against
// graph.MemoryLimit before anything is allocated, external data must stay
// in the model's folder, and cycles, dangling inputs, duplicate names,
// unknown element types and opsets newer than MaxOpset are errors.
//
// Export (and ExportProto, WriteFile) writes the nodes that given outputs
// depend on as an ONNX model (opset 17 by default): inputs as graph inputs,
// parameters as initializers under their names (with
// ExportOptions.Values, holding the values a trained vm.Machine has),
// constants as Constant nodes, every node's doc string the file:line that
// built it. Gradient and
// Hessian programs export too: the gradient ops of convolutions, pooling,
// batch norm, embeddings and losses are written with ONNX's ops, and Scan
// loops as ONNX's Scan. A custom op exports through the Exporter
// interface, or as its decomposition when it is a composite or implements
// graph.Decomposer; otherwise Export's error names it.
//
// The generated protobuf types are in package onnxpb.
package onnx
