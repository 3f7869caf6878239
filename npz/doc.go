// Package npz reads and writes numpy's .npy arrays and .npz archives, and
// the trajectory .npz files wmzip reads and writes (docs/cli.md).
//
// # Format
//
// A .npy stream is the format of numpy.lib.format: the magic "\x93NUMPY",
// a version byte pair, a little-endian header length (2 bytes for version
// 1.0, 4 for 2.0 and 3.0), a Python dict literal with keys 'descr',
// 'fortran_order' and 'shape', then the raw elements. A .npz is a zip
// archive whose members are NAME.npy streams, stored (numpy.savez) or
// deflated (numpy.savez_compressed); zip64 archives are read.
//
// # What is read
//
// Versions 1.0, 2.0 and 3.0 headers of at most 64 KiB and 64 dimensions,
// in C order or Fortran order (converted to C order, the array read whole),
// of seven dtypes, little-endian ('|' for the one-byte type):
//
//	descr  Dtype    Array.Data
//	<f4    float32  []float32
//	<f2    float16  []float32 (widened exactly)
//	<f8    float64  []float64
//	|u1    uint8    []uint8   ('<u1' accepted too)
//	<u2    uint16   []uint16
//	<i4    int32    []int32
//	<i8    int64    []int64
//
// Everything else fails with ErrUnsupported: big-endian,
// object (pickled), structured and other dtypes, zip members that are not
// .npy, encrypted members, compression methods other than store and
// deflate. Malformed input fails with ErrFormat, truncated input also
// matching io.ErrUnexpectedEOF.
//
// Reading is two-pass. The zip directory and every member's header are
// checked first: sizes against the archive, shapes for overflow, and each
// member's data length exactly against its shape and dtype. The memory
// the decoded arrays need is then bounded by WithMaxBytes (default 8 GiB,
// ErrTooLarge) before any data is read. A declared size never drives an
// allocation on its own: stored data is allocated once its bytes are known
// to be in the file, deflated data grows with what decompresses. Member
// checksums are verified.
//
// # What is written
//
// .npy streams exactly as numpy 1.24 writes them (version 1.0, header
// padded to 64 bytes, C order) and .npz archives of them, deflated by
// default, with fixed member times so that equal input gives equal bytes.
// Files are written atomically: a temporary file in the destination's
// directory, synced, then renamed.
//
// # Trajectories
//
// A trajectory .npz holds "codes" (uint8 or uint16, [T,S,M] or [T,N])
// and/or "obs" (float32, float16 or float64, read as float32, [T,S,d] or
// [T,D]), optional "actions"
// (int32 or int64, [T]) and optional "episode_start" (int64, or int32 on
// read, [E], strictly ascending from 0, each < T). ReadTrajectory checks
// all of it and fails with ErrContract otherwise; other arrays are kept in
// Trajectory.Extra.
//
// # Streaming
//
// OpenTrajectory reads a trajectory state by state: it checks the headers
// and reads the episode starts up front, then decompresses codes, obs and
// actions as Read asks for them, each member from its own position in the
// archive, through buffers of a fixed size (an array in Fortran order is
// read whole and converted once, within WithMaxBytes). CreateTrajectory
// writes one
// state by state from a header that gives the shape ahead: the first
// array goes straight into the archive, the other per-step arrays wait in
// temporary files beside the output until Close appends them, and the
// bytes equal WriteTrajectory's. Neither holds memory that grows with T
// beyond the episode starts.
//
// Errors are *Error values whose one-line message names the file and the
// array, for example:
//
//	npz: test.npz: array "actions" has dtype float32, want int32 or int64
package npz
