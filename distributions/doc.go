// Package distributions holds probability distributions whose parameters
// are graph nodes, after torch.distributions: Normal, Laplace, Uniform,
// Bernoulli, Categorical, Gamma, Beta, Dirichlet, StudentT and
// MultivariateNormal, each with Sample, LogProb, Entropy, Mean and
// Variance, RSample for the reparameterisable ones (all but Bernoulli and
// Categorical; the gamma family's, Gamma, Beta, Dirichlet and StudentT,
// by implicit reparameterisation, differentiate twice in the gamma draws'
// concentrations: a third derivative there is an error, see
// Gamma.RSample), and KL for the pairs PyTorch registers among them.
// Lgamma, Digamma and Polygamma are the special functions their densities
// need, differentiable to any order.
//
// Every result is an ordinary node built from ops, so log-densities,
// entropies and divergences differentiate to any order with respect to the
// parameters (and, for log-densities, the value). Samples draw from an
// ops.Generator: Sample's result carries no gradient, RSample's
// (loc + scale·ε, say) carries gradients to the parameters through ε's
// transformation. A sample has the distribution's batch shape, the
// broadcast of its parameters' shapes, followed by the event's (the
// categories of a Dirichlet, the vectors of a MultivariateNormal).
//
// Parameters are not checked against their support (a positive scale, say):
// they are nodes whose values are known only when a program runs. Shapes
// and dtypes are checked when a distribution is made; a mistake is a sticky
// error on the graph, as everywhere in nabla.
package distributions
