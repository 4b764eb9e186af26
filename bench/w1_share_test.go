package bench

import (
	"testing"
	"time"

	"github.com/nabla-go/nabla/vm"
)

// BenchmarkW1AdamShare measures Adam's share of W1's step on one thread
// as the difference of two steps, (Adam's − SGD's) ÷ Adam's, which counts
// what Adam's step costs the rest of the step too (the caches it fills).
// It runs Adam's step, Adam's with float32 moments
// (AdamConfig.Float32Moments) and SGD's in turn, b.N times each, with the
// profile on, and sums each instruction's fastest run, a time other
// processes on a loaded machine move less than the step's: share% is
// Adam's share, share-adam32m% that of Adam with float32 moments (the
// same step for float32 parameters), adam-ms, adam32m-ms and sgd-ms the
// steps' sums.
func BenchmarkW1AdamShare(b *testing.B) {
	for _, dtype := range dtypes {
		b.Run(dtypeName(dtype), func(b *testing.B) {
			m := newW1Model(dtype, w1Sizes, w1Batch, 1)
			var machines []*vm.Machine
			for _, opt := range []string{"adam", "adam32m", "sgd"} {
				machine, err := vm.New(m.program(b, opt), vm.WithThreads(1), vm.WithProfile())
				if err != nil {
					b.Fatal(err)
				}
				defer machine.Close()
				machines = append(machines, machine)
			}
			fastest := make([][]time.Duration, len(machines))
			for r := 0; b.Loop(); r++ {
				for i, machine := range machines {
					machine.ResetProfile()
					if err := machine.Run(m.feeds); err != nil {
						b.Fatal(err)
					}
					for k, e := range machine.Profile().Entries {
						if r == 0 {
							fastest[i] = append(fastest[i], e.Total)
						}
						fastest[i][k] = min(fastest[i][k], e.Total)
					}
				}
			}
			sums := make([]float64, len(machines))
			for i, f := range fastest {
				for _, d := range f {
					sums[i] += float64(d)
				}
			}
			adam, adam32m, sgd := sums[0], sums[1], sums[2]
			b.ReportMetric(100*(adam-sgd)/adam, "share%")
			b.ReportMetric(100*(adam32m-sgd)/adam32m, "share-adam32m%")
			b.ReportMetric(adam/1e6, "adam-ms")
			b.ReportMetric(adam32m/1e6, "adam32m-ms")
			b.ReportMetric(sgd/1e6, "sgd-ms")
		})
	}
}
