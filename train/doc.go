// Package train builds wmzip codecs from trajectories: the OPQ quantizer
// of float observations (Quantizer), the world model over their codes
// (wm.Train) and the calibration of the retention gate (CalibrateGate),
// together in one call (Codec).
//
// Training is the one part of wmzip that needs linear algebra (the
// quantizer's rotation: an eigendecomposition and singular value
// decompositions) and floating point that may round differently across
// machines; it lives here so that importing the codec does not pull it
// in. What it builds is a model file whose bytes then decide everything
// bit-exactly.
package train
