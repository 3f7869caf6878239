package train

import (
	"encoding/binary"
	"math"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/opq"
)

// qualitySection is the model-file section that records how the quantizer
// did on observations held out of its training (SPEC.md 3.1, informative):
// u16 version (1), six reserved zero bytes, u64 slot vectors, f64 mean
// relative squared error, f64 mean cosine, little-endian.
const qualitySection = "QDST"

func marshalQuality(q opq.Quality) []byte {
	b := make([]byte, 0, 32)
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = append(b, 0, 0, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint64(b, uint64(q.Vectors))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(q.Distortion()))
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(q.Cosine()))
}

// QuantizerQuality returns how the codec's quantizer did on observations
// held out of its training, as Codec measured and the model records: the
// slot vectors measured, and their mean relative squared error and mean
// cosine against their reconstruction. ok is false when the model records
// none (a model without a quantizer, or of too few states).
func QuantizerQuality(c *wmzip.Codec) (q opq.Quality, ok bool) {
	b := c.Model().Section(qualitySection)
	if len(b) != 32 || binary.LittleEndian.Uint16(b) != 1 {
		return q, false
	}
	n := int64(binary.LittleEndian.Uint64(b[8:]))
	d := math.Float64frombits(binary.LittleEndian.Uint64(b[16:]))
	cos := math.Float64frombits(binary.LittleEndian.Uint64(b[24:]))
	if n <= 0 || !(d >= 0) || math.IsInf(d, 0) || !(math.Abs(cos) <= 1) {
		return q, false
	}
	return opq.Quality{Vectors: n, SumErr: d * float64(n), SumCos: cos * float64(n)}, true
}
