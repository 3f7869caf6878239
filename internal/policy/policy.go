// Package policy holds the retention policies `wmzip bench rd` compares
// with the rule: the ablations of MemoWM §4.5. They are not part of the
// format: a file written with one decodes only with the same policy and
// knob, and their knobs reuse the header's λ field only in experiments.
package policy

import (
	"github.com/wmzip/wmzip/internal/gate"
	"github.com/wmzip/wmzip/internal/lambda"
	"github.com/wmzip/wmzip/internal/wm"
)

// Policy names a retention policy.
type Policy string

// The policies compared by `wmzip bench rd`. Rule is the normative rule;
// the others are the ablations.
const (
	Rule        Policy = "rule"        // λ·ê·V·w ≥ H
	Random      Policy = "random"      // omit a pseudo-random fraction knob/2^32
	Uncertainty Policy = "uncertainty" // omit when H < knob (1/256 bit)
	StaticE     Policy = "static-e"    // ê = the coordinate's marginal error rate
	UniformV    Policy = "uniform-v"   // V = its calibration mean
)

// All lists every policy, the rule first.
func All() []Policy { return []Policy{Rule, Random, Uncertainty, StaticE, UniformV} }

// Retain returns the retention function of a policy at a knob, with the
// gate p: λ (16.16) for the rule, Static-e and Uniform-V, an entropy
// threshold for Uncertainty, an omission probability (Q32) for Random. It
// returns nil for an unknown policy. The function is safe for concurrent
// use.
func Retain(p *gate.Params, pol Policy, knob uint32) func(j int, pr *wm.Predictor) bool {
	switch pol {
	case Rule:
		return p.Rule(lambda.Lambda(knob)).Retain
	case Random:
		return func(j int, pr *wm.Predictor) bool { return predHash(j, pr) >= knob }
	case Uncertainty:
		return func(j int, pr *wm.Predictor) bool {
			st := gate.PredStats(pr)
			return st.H >= knob
		}
	case StaticE:
		return func(j int, pr *wm.Predictor) bool {
			st := gate.PredStats(pr)
			_, v, w := p.Terms(j, st)
			return st.H == 0 || gate.Keep(knob, p.CoordErr[j], v, w, st.H)
		}
	case UniformV:
		return func(j int, pr *wm.Predictor) bool {
			st := gate.PredStats(pr)
			e, _, w := p.Terms(j, st)
			return st.H == 0 || gate.Keep(knob, e, p.MeanV, w, st.H)
		}
	}
	return nil
}

// predHash is a 32-bit hash of a coordinate and its prediction: a
// pseudo-random draw both sides of a file can repeat.
func predHash(j int, pr *wm.Predictor) uint32 {
	h := uint64(j)*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
	top, hit := pr.Prediction()
	if hit > 0 {
		h = (h ^ uint64(top)<<32 ^ uint64(hit)) * 0x100000001B3
	} else {
		for _, c := range pr.Table() {
			h = (h ^ uint64(c)) * 0x100000001B3
		}
	}
	h ^= h >> 29
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 32
	return uint32(h)
}
