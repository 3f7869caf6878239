package gate

import "github.com/wmzip/wmzip/wm"

// Baseline policies for rate–distortion experiments. They are not part of
// the format: a file written with one decodes only with the same policy and
// knob, and their knobs reuse the header's λ field only in experiments.

// Policy names a retention policy.
type Policy string

// The policies compared by `wmzip bench rd`. PolicyRule is the normative
// rule; the others are the ablations of MemoWM §4.5.
const (
	PolicyRule        Policy = "rule"        // λ·ê·V·w ≥ H
	PolicyRandom      Policy = "random"      // omit a pseudo-random fraction knob/2^32
	PolicyUncertainty Policy = "uncertainty" // omit when H < knob (1/256 bit)
	PolicyStaticE     Policy = "static-e"    // ê = the coordinate's marginal error rate
	PolicyUniformV    Policy = "uniform-v"   // V = its calibration mean
)

// Policies lists every policy, the rule first.
var Policies = []Policy{PolicyRule, PolicyRandom, PolicyUncertainty, PolicyStaticE, PolicyUniformV}

// Baseline returns the retention function of a policy at a knob: λ (16.16)
// for the rule, Static-e and Uniform-V, an entropy threshold for
// Uncertainty, an omission probability (Q32) for Random. It returns nil for
// an unknown policy. The function is safe for concurrent use.
func (p *Params) Baseline(pol Policy, knob uint32) func(j int, pr *wm.Predictor) bool {
	switch pol {
	case PolicyRule:
		return p.Rule(knob).Retain
	case PolicyRandom:
		return func(j int, pr *wm.Predictor) bool { return predHash(j, pr) >= knob }
	case PolicyUncertainty:
		return func(j int, pr *wm.Predictor) bool {
			st := PredStats(pr)
			return st.H >= knob
		}
	case PolicyStaticE:
		return func(j int, pr *wm.Predictor) bool {
			st := PredStats(pr)
			return st.H == 0 || keep(knob, p.CoordErr[j], p.impact(j, st), p.weight(j), st.H)
		}
	case PolicyUniformV:
		return func(j int, pr *wm.Predictor) bool {
			st := PredStats(pr)
			return st.H == 0 || keep(knob, p.errRate(j, st), p.MeanV, p.weight(j), st.H)
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

// ModalFill turns a rule that only decides whether coordinate j is coded
// into one that also gives the value of an omitted coordinate: the
// prediction's modal value (as container version 3 fills).
func ModalFill(retain func(j int, pr *wm.Predictor) bool) func(j int, pr *wm.Predictor) (bool, uint16) {
	return func(j int, pr *wm.Predictor) (bool, uint16) {
		if retain(j, pr) {
			return true, 0
		}
		return false, pr.Modal()
	}
}
