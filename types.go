package wmzip

import (
	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/opq"
	"github.com/wmzip/wmzip/internal/wm"
)

// The types below are the container's and the model's own, named here so
// that a user of this package needs no other import to hold what its
// calls return. Each is an alias: the value is the lower package's, with
// its fields and methods.
type (
	// Header is a .wmz file's header: geometry, model ID, whether the
	// file is lossless, its retention levels (File.Header).
	Header = format.Header
	// Info is a file's summary from its index: counts, sizes, λ and the
	// distortion its writer recorded (File.Info).
	Info = format.Info
	// Account is a Writer's record of the states it placed: coded and
	// omitted coordinates, bits, distortion (Writer.Account).
	Account = format.Account
	// Report is the distortion a file's index records: against the
	// lossless reconstruction and, when the writer had them, against the
	// float observations (Account.Report, Info.Report).
	Report = format.Report
	// Recovery is what Recover salvaged of a damaged file.
	Recovery = format.Recovery
	// Probe is one trial encoding of a distortion target's search
	// (WithProbe).
	Probe = format.Probe
	// SearchResult is the outcome of a distortion target's search: the λ
	// chosen, the distortion reached, the trials it took (Writer.Search).
	SearchResult = format.LambdaResult
	// FormatError is the error of a damaged file, carrying the offset of
	// the damage; it wraps ErrCorrupt or ErrChecksum.
	FormatError = format.FormatError
	// AppendFile is what Append writes to: a file open for reading and
	// writing (an *os.File is one).
	AppendFile = format.AppendFile
	// Model is a codec's world model: geometry, tables, gate, quantizer
	// sections (Codec.Model).
	Model = wm.Model
	// Geometry is a codec's shape: slots, coordinates a slot, values a
	// coordinate (Codec.Geometry).
	Geometry = wm.Geometry
	// Quantizer is a codec's product quantizer (Codec.Quantizer).
	Quantizer = opq.Quantizer
)
