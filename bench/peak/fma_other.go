//go:build !amd64 || purego

package main

// available reports that this build has no FMA probe: the loops are amd64
// assembly.
func available() ([]probe, string) {
	return nil, "no probe for this build (it needs amd64 without the purego tag)"
}
