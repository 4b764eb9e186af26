// Package distributions holds probability distributions whose parameters
// are graph nodes, after torch.distributions: Normal, Laplace, Uniform,
// Bernoulli and Categorical, each with Sample, LogProb, Entropy, Mean and
// Variance, RSample for the reparameterisable ones, and KL for the pairs
// PyTorch registers.
//
// Every result is an ordinary node built from ops, so log-densities,
// entropies and divergences differentiate to any order with respect to the
// parameters (and, for log-densities, the value). Samples draw from an
// ops.Generator: Sample's result carries no gradient, RSample's
// (loc + scale·ε, say) carries gradients to the parameters through ε's
// transformation. A sample has the distribution's batch shape, the
// broadcast of its parameters' shapes.
//
// Parameters are not checked against their support (a positive scale, say):
// they are nodes whose values are known only when a program runs. Shapes
// and dtypes are checked when a distribution is made; a mistake is a sticky
// error on the graph, as everywhere in nabla.
package distributions
