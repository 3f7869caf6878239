// Package bench measures wmzip beside general-purpose compressors on the
// same trajectories, for the `wmzip bench` verbs and for Go programs.
//
// Speed measures one table, in one run on the same data: per coder,
// bits/state (file bytes × 8 ÷ states, shared model excluded and reported
// beside), encode and decode states/s on one goroutine (and on more, for
// coders that can use them), and the latency of a random read of one state.
// Every decode and every read is checked: against the input for a lossless
// coder, against the writer's reconstruction for a lossy one; a mismatch
// fails the run.
//
// Prepare trains what wmzip needs (a quantizer for float observations, the
// world model, the retention gate); Graphworld generates the default small
// world. A Coder is one row: Speed's default set is DefaultCoders, and
// Measure times any set.
//
// PrepareRD and RDSetup.Sweep compare retention policies at matched
// distortion (rate–distortion curves, PrintRD, PlotRD). Alloc runs the
// storage-by-access benchmark: graphworld walks, an access trace, and the
// file encoded under CTMC, uniform, shuffled and reversed allocations at
// one budget (PrintAlloc). Both check every decode against the writer.
package bench
