// Command vae trains a variational autoencoder on the handwritten digits
// shipped with the mlp example (8×8 pixels; a 64→32→(μ, log σ) encoder, an
// 8-dimensional latent code, a 8→32→64 Bernoulli decoder), maximising the
// ELBO built from package distributions: a reparameterised sample of
// q(z|x), the KL divergence from the prior in closed form, and the
// Bernoulli log-likelihood of the pixels. It prints the ELBO on held-out
// digits and can write digits decoded from prior draws as a PNG grid.
//
//	go run ./examples/vae
//	go run ./examples/vae -epochs 50 -samples samples.png
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vae:", err)
		os.Exit(2)
	}
	if _, err := Train(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// parseFlags reads the configuration from args, starting from
// DefaultConfig; usage and errors go to errOut.
func parseFlags(args []string, errOut io.Writer) (Config, error) {
	cfg := DefaultConfig()
	fs := flag.NewFlagSet("vae", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.IntVar(&cfg.Epochs, "epochs", cfg.Epochs, "passes over the training set")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "digits per training step")
	fs.Float64Var(&cfg.LR, "lr", cfg.LR, "Adam's learning rate")
	fs.IntVar(&cfg.Hidden, "hidden", cfg.Hidden, "units of the encoder's and decoder's hidden layer")
	fs.IntVar(&cfg.Latent, "latent", cfg.Latent, "dimensions of the latent code")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seeds the split, shuffles, initial weights and draws")
	fs.StringVar(&cfg.Digits, "digits", cfg.Digits, "the UCI digits CSV (default: the mlp example's)")
	fs.Float64Var(&cfg.TestFraction, "test", cfg.TestFraction, "fraction of the digits held out")
	fs.StringVar(&cfg.Samples, "samples", cfg.Samples, "write 64 digits decoded from prior draws here (PNG)")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return cfg, nil
}
