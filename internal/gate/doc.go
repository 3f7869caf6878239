// Package gate is wmzip's retention rule: for every coordinate of a coded
// state it decides, from the world model's predicted frequency table alone,
// whether the coordinate's value is stored or left to the model, which then
// fills in its modal value. The decoder runs the same rule on the same
// tables, so no retention mask is stored (MemoWM, §3.3 and Appendix D).
//
// The rule (SPEC.md, "Retention gate") keeps coordinate j of a state iff
//
//	λ · ê_j · V_j · w_j  ≥  H_j
//
// where H_j is the entropy of the predicted table (the cost of storing the
// value), ê_j the calibrated rate at which the modal value is wrong given
// the table's bin — of its modal probability (AxisModal, the default) or of
// its entropy (AxisEntropy, MemoWM's bins) — weighted by the damage errors
// did and how long they would last in closed loop (see Calibrate), V_j the
// expected reconstruction damage given such an error,
// computed from the table and the model's codebook distances, and w_j an
// optional per-coordinate weight. Everything that decides a retention is
// integer arithmetic on the table and on integer parameters stored in the
// model file as the section "GATE" (Params). λ = ∞ keeps every coordinate:
// lossless coding is the special case.
//
// Calibrate fits Params on held-out episodes, in floating point, and emits
// integers. Floating point appears nowhere on the path that decides a bit.
package gate
