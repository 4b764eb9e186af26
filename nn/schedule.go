package nn

import (
	"fmt"
	"math"
)

// Schedule gives the learning rate for a training step, counted from 0.
// Apply sets it on an optimiser between runs (SetLR: no recompilation).
type Schedule interface {
	LR(step int) float64
}

// LRSetter is an optimiser whose learning rate a schedule can set: SGD,
// Adam and AdamW.
type LRSetter interface {
	SetLR(m ParamStore, lr float64) error
}

// Apply sets opt's learning rate on machine m to s's rate for step:
// call it before each run.
func Apply(s Schedule, opt LRSetter, m ParamStore, step int) error {
	if s == nil || opt == nil {
		return fmt.Errorf("nn: Apply: the schedule and the optimiser must not be nil")
	}
	return opt.SetLR(m, s.LR(step))
}

// StepLR multiplies the rate by Gamma every Every steps, as PyTorch's
// StepLR: Base·Gamma^⌊step/Every⌋.
type StepLR struct {
	Base  float64
	Every int
	Gamma float64
}

// LR is Base·Gamma^⌊step/Every⌋ (Base when Every is not positive).
func (s StepLR) LR(step int) float64 {
	if s.Every <= 0 {
		return s.Base
	}
	return s.Base * math.Pow(s.Gamma, float64(max(step, 0)/s.Every))
}

// LinearLR moves the rate in a straight line from Start to End over Steps
// steps, then stays at End.
type LinearLR struct {
	Start, End float64
	Steps      int
}

// LR is Start + (End-Start)·min(step/Steps, 1).
func (s LinearLR) LR(step int) float64 {
	if s.Steps <= 0 {
		return s.End
	}
	t := min(float64(max(step, 0))/float64(s.Steps), 1)
	return s.Start + (s.End-s.Start)*t
}

// CosineLR warms up linearly from Base/Warmup to Base over the first
// Warmup steps, then follows half a cosine from Base down to Min at step
// Total, and stays at Min: the schedule of most transformer training.
type CosineLR struct {
	Base, Min     float64
	Warmup, Total int
}

// LR is Base·(step+1)/Warmup during the warm-up, then Min + (Base-Min)·
// (1+cos(π·t))/2 with t the fraction of the remaining steps done.
func (s CosineLR) LR(step int) float64 {
	step = max(step, 0)
	if step < s.Warmup {
		return s.Base * float64(step+1) / float64(s.Warmup)
	}
	span := s.Total - s.Warmup
	if span <= 0 {
		return s.Min
	}
	t := min(float64(step-s.Warmup)/float64(span), 1)
	return s.Min + (s.Base-s.Min)*(1+math.Cos(math.Pi*t))/2
}
