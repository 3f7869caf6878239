// Package opq implements Optimized Product Quantization (OPQ) of float32
// vectors: an orthogonal rotation followed by a product quantizer that splits
// the rotated vector into M subspaces of Dim/M coordinates and replaces each
// sub-vector by the index of its nearest of K centroids.
//
// In wmzip an observation is a set of slot vectors (32 slots of 512 values
// per step); each slot vector becomes M codes below K. Package train learns
// the rotation and codebooks from a sample of vectors (train.Quantizer: Ge,
// He, Ke and Sun, "Optimized Product Quantization", TPAMI 2014); New builds
// a quantizer from rotations and codebooks trained anywhere. Encode maps
// vectors to codes, Decode maps codes back to vectors, MarshalBinary and
// UnmarshalQuantizer store the quantizer in a model file, and
// DistanceTables exports integer centroid distances for the retention
// gate. RotateQuery, RotatedCentroids and QueryTable serve asymmetric
// distance computation for search (package search): a query rotated once,
// then its distance to every centroid of every subspace.
//
// Determinism. Encode returns the same codes whatever the thread count or
// batch sizes: work is split into fixed pieces and every float sum runs in
// a fixed order. The arithmetic kernel rounds each product before adding it (no
// fused multiply-add), so its SIMD and pure-Go forms agree bit for bit.
// Codes are what wmzip stores, so they are the bit-exact contract of this
// package; decoded vectors are reproducible on one machine but, being
// float32 results, are not promised to match across architectures.
//
// The package is quiet: progress is reported only through
// Quantizer.SetProgress (and Config.Progress while training).
package opq
