// Package nn provides neural-network modules, losses, initialisers, optimisers and checkpoints built on nabla graphs.
package nn
