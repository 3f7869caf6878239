package gate

import "github.com/wmzip/wmzip/internal/wm"

// Terms returns the factors the rule weighs coordinate j's cost H
// against, for the prediction whose statistics are st: the error rate ê
// (Q16), the impact V (UnitDistance ≈ 1) and the weight w (Q8). The rule
// keeps the coordinate iff Keep(λ, ê, V, w, H). They let a caller try
// other choices of a factor, as the ablations of `wmzip bench rd` do.
func (p *Params) Terms(j int, st Stats) (e, v, w uint32) {
	return p.errRate(j, st), p.impact(j, st), p.weight(j)
}

// Keep is the rule's comparison λ·ê·V·w ≥ H in fixed point: λ 16.16, ê
// Q16, V in UnitDistance, w Q8, H Q8 (1/256 bit).
func Keep(lambda, e, v, w, h uint32) bool { return keep(lambda, e, v, w, h) }

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
