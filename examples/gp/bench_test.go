package main

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/nabla-go/nabla/vm"
)

// BenchmarkGP times one run of the program that computes the NLML, its
// gradient and its 3×3 Hessian at fixtureTheta, on BenchData(n) (the data
// bench/torch/gp.py builds for torch.autograd.functional.hessian), on one
// thread and on all.
//
//	go test -run '^$' -bench BenchmarkGP ./examples/gp
//	/usr/bin/python3 bench/torch/gp.py
func BenchmarkGP(b *testing.B) {
	for _, n := range []int{50, 500} {
		for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("n=%d/threads=%d", n, threads), func(b *testing.B) {
				m, err := NewModel(BenchData(n), fixtureTheta)
				if err != nil {
					b.Fatal(err)
				}
				der, err := m.NewDerivatives(vm.WithThreads(threads))
				if err != nil {
					b.Fatal(err)
				}
				if err := der.Run(fixtureTheta); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for b.Loop() {
					if err := der.Run(fixtureTheta); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/op")
			})
		}
	}
}
