// Package wmzip compresses the memory of an agent: trajectories of
// observations (float slot vectors) or of their quantized codes, stored as
// .wmz files (SPEC.md) that a shared world model predicts and a retention
// gate thins.
//
// A Codec bundles what both sides share: the quantizer that turns slot
// vectors into codes, the world model and the gate's calibration. Train
// builds one from trajectories; LoadCodec and Codec.Save keep it in a .wmm
// file.
//
// Ways in:
//   - Lossless codes: NewWriter (the default mode), then Open or NewReader.
//   - Lossy observations: NewWriter with WithLambda, or WithDistortion for
//     the least storage whose mean relative distortion meets a target;
//     File.Obs and Reader.ReadObs give the reconstruction back as vectors.
//   - Random access: Open / NewFile read one state or one episode through
//     the file's index.
//   - Append and recovery: Append continues a closed file; Recover keeps
//     the valid records of a damaged one.
//   - Storage by access: StoreByAccess gives states read often more bits
//     within a budget, from an access trace.
//   - Audit: ctmc.Audit tests whether an access trace is heavy-tailed
//     enough for storage by access to pay.
//
// Long calls take a context and report progress through WithProgress.
// Errors wrap the sentinels below (errors.Is), and damaged files give a
// *FormatError carrying the offset.
//
// Determinism: everything that decides a bit of a file or a value of a
// reconstruction is integer arithmetic (SPEC.md); floats appear only in
// training, calibration, allocation planning and the writer-side
// quantization of observations.
package wmzip
