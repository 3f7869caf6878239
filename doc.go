// Package wmzip compresses the memory of an agent: episodes of actions
// and observations (float slot vectors) or of their quantized codes,
// stored as .wmz files (SPEC.md) that a shared world model predicts and a
// retention gate thins.
//
// A Codec holds what both sides share: the quantizer that turns slot
// vectors into codes, the world model and the gate's calibration, kept in
// a .wmm model file. Package train builds one from trajectories;
// LoadCodec reads one.
//
// # Writing
//
// Create (a file) or NewWriter (any io.Writer) returns a Writer.
// WriteAll writes whole episodes; WriteEpisode then WriteObs or WriteCodes
// write one state at a time, with bounded memory. Close completes the
// file. Append continues a closed file. The Writer is lossless by
// default; the lossy modes need a codec with a gate:
//
//   - WithSourceDistortion(d): the least storage whose mean relative
//     squared error against the observations written is at most d.
//   - WithDistortion(d): the same against the lossless reconstruction,
//     what retention alone costs.
//   - WithLambda(λ): one retention trade-off for every state.
//   - WithLevels and Writer.SetLevel: a trade-off per state (package
//     alloc picks them from how often each state is read).
//
// No lossy file is larger than the lossless one: a chunk the retention
// rule would not shrink is coded losslessly. Writer.Account reports what
// the file lost, against the lossless reconstruction and against the
// observations given.
//
// # Reading
//
// DecodeAll reads a whole stream into episodes. Open (a file) or NewFile
// (any io.ReaderAt) read at random through the file's index: File.State
// and File.Obs one state, File.Episode one episode. NewReader reads a
// stream in order, state by state. A file that embeds its model
// (WithEmbeddedModel) is read without a codec. Recover keeps what is valid
// of a damaged file.
//
// Decoding methods take a dst to reuse: the result is written to it when
// it is large enough, and returned.
//
// # Errors
//
// Errors wrap the sentinels ErrCorrupt, ErrChecksum, ErrModelMismatch,
// ErrNoModel, ErrTooLarge, ErrClosed and ErrInput (errors.Is); a damaged
// file's error carries its offset (*format.FormatError).
//
// # Determinism
//
// Everything that decides a bit of a file or a value of a reconstruction
// is integer arithmetic (SPEC.md): the same episodes, codec and options
// give the same bytes on every machine, and every decoder the same codes.
// Floats appear only in training, in the writer-side quantization of
// observations and in reconstructing them.
//
// # Other packages
//
// train builds codecs; alloc stores states by how often they are read,
// from an access trace that ctmc audits; npz reads and writes numpy
// trajectories; format is the container (SPEC.md) beneath this package;
// wm, gate, rans and opq are the world model, the retention rule, the
// entropy coder and the quantizer.
package wmzip
