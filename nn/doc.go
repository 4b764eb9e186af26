// Package nn provides neural-network modules, losses, initialisers,
// optimisers and checkpoints built on nabla graphs.
//
// # Modules
//
// A Module builds its part of a graph in Forward and owns parameters
// (graph.Param nodes) and buffers. A module's parameters are made when the
// module is, in the graph it is given, so constructors take the graph and a
// name:
//
//	g := graph.New()
//	rng := rand.New(rand.NewPCG(1, 1))
//	model := nn.NewSequential("mlp",
//		nn.NewLinear(g, "fc1", 64, 32, true, nn.WithRand(rng)),
//		nn.ReLU{},
//		nn.NewLinear(g, "fc2", 32, 10, true, nn.WithRand(rng)),
//	)
//	logits := model.Forward(x)
//
// The name prefixes the parameters' node names ("fc1.weight") and names
// the graph scope Forward builds in, which DOT export draws as a cluster.
// Options choose the dtype (WithDType), the random generator the initial
// values come from (WithRand) and the initialisers (WithInit,
// WithBiasInit). Construction errors are sticky, as every graph-building
// error: they are recorded on g and reported by g.Err, the compiler and the
// machine.
//
// NamedParameters finds a module's parameters by walking its fields, child
// modules, slices and maps included, and names them by their path
// ("layers.0.weight", or "fc1.weight" for a layer named fc1 in a
// Sequential); see Module for the rules.
//
// # Recurrent networks
//
// RNN, LSTM and GRU are PyTorch's modules of those names: the same
// settings (RecurrentConfig: layers, batch-first, biases, bidirectional,
// dropout between layers, the RNN's nonlinearity), unbatched inputs too,
// the same parameters (weight_ih_l0, weight_hh_l0,
// bias_ih_l0, bias_hh_l0, …, gates in PyTorch's order), the same
// initialisation and the same outputs, so a state dict saved from PyTorch
// loads with Load as it is. Their loop over time is an ops.Scan, compiled
// once whatever the sequence's length; each layer's input product is one
// matrix product outside the loop. Run takes initial states and returns
// PyTorch's (output, h_n[, c_n]):
//
//	lstm := nn.NewLSTM(g, "lstm", 10, 20, nn.RecurrentConfig{Layers: 2})
//	out, hn, cn := lstm.Run(x, h0, c0) // x (T, N, 10); out (T, N, 20); hn, cn (2, N, 20)
//
// RNNCell, LSTMCell and GRUCell are one step each, for loops written by
// hand or inside a Scan of one's own.
//
// # Training
//
// An Optimizer (SGD, Adam, AdamW) turns a loss into graph expressions for
// the parameters' next values; compiled with compile.WithUpdates, one run of
// the program is one training step. Modules whose mode matters (Dropout)
// build differently for training and evaluation: build the training pass,
// call SetTraining(model, false), build the evaluation pass in the same
// graph, and run its program on a machine made with vm.SharingParams.
//
//	loss := nn.CrossEntropy(model.Forward(x), y)
//	opt := nn.NewAdam(nn.DefaultAdam().WithLR(1e-3))
//	updates, err := nn.TrainingUpdates(opt, loss, model)
//	prog, err := compile.Compile([]*graph.Node{loss}, compile.WithUpdates(updates))
//
// # Losses
//
// Besides MSE and CrossEntropy, the losses of torch.nn.functional keep
// their names, settings and numerically stable forms: BCELoss,
// BCEWithLogitsLoss, NLLLoss, GaussianNLLLoss, KLDivLoss, PoissonNLLLoss,
// HuberLoss, SmoothL1Loss, MarginRankingLoss, HingeEmbeddingLoss,
// SoftMarginLoss, CosineEmbeddingLoss, TripletMarginLoss and
// MultiMarginLoss. Settings are LossOptions, the reduction among them
// (ReduceMean by default, ReduceSum, ReduceNone):
//
//	loss := nn.BCEWithLogitsLoss(logits, y, nn.WithPosWeight(w), nn.WithReduction(nn.ReduceSum))
//
// # Checkpoints
//
// Save and Load write and read the values a machine holds for a module's
// state (StateOf) and an optimiser's (Optimizer.State) as safetensors files.
package nn
