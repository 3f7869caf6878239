package npz

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/wmzip/wmzip/internal/half"
)

// Array is one numpy array held in memory in C (row-major) order.
//
// Dtype is one of "float32", "float16", "float64", "uint8", "uint16",
// "int32", "int64", and Data is the matching slice: []float32 for both
// float32 and float16 (float16 values are widened exactly on read and
// rounded to nearest even on write), []float64, []uint8, []uint16, []int32
// or []int64. len(Data) is the product of Shape; an empty Shape is a
// scalar holding one element.
type Array struct {
	Name  string // key in the .npz, without the ".npy" suffix
	Dtype string
	Shape []int
	Data  any
}

// Len returns the number of elements that Shape describes, or -1 if a
// dimension is negative or the product overflows int.
func (a *Array) Len() int {
	n := 1
	for _, d := range a.Shape {
		if d < 0 || (d > 0 && n > math.MaxInt/d) {
			return -1
		}
		n *= d
	}
	return n
}

// dataLen returns len(Data) if Data has the Go type that dtype dt needs.
func dataLen(dt dtype, data any) (int, bool) {
	switch v := data.(type) {
	case []float32:
		return len(v), dt.name == "float32" || dt.name == "float16"
	case []float64:
		return len(v), dt.name == "float64"
	case []uint8:
		return len(v), dt.name == "uint8"
	case []uint16:
		return len(v), dt.name == "uint16"
	case []int32:
		return len(v), dt.name == "int32"
	case []int64:
		return len(v), dt.name == "int64"
	}
	return 0, false
}

// check validates an array before it is written.
func (a *Array) check(l loc) (dtype, error) {
	l.array = a.Name
	dt, ok := dtypeByName(a.Dtype)
	if !ok {
		return dt, l.errf(ErrUnsupported, nil, "has dtype %q (want one of %s)", a.Dtype, strings.Join(Dtypes(), ", "))
	}
	if len(a.Shape) > maxDims {
		return dt, l.errf(ErrUnsupported, nil, "has %d dimensions (limit %d)", len(a.Shape), maxDims)
	}
	n := a.Len()
	if n < 0 {
		return dt, l.errf(ErrFormat, nil, "has invalid shape %v", a.Shape)
	}
	have, ok := dataLen(dt, a.Data)
	if !ok {
		return dt, l.errf(ErrFormat, nil, "has dtype %s but Data of type %T", a.Dtype, a.Data)
	}
	if have != n {
		return dt, l.errf(ErrFormat, nil, "has shape %s (%d elements) but %d data elements", fmtShape(a.Shape), n, have)
	}
	return dt, nil
}

// validName reports whether name can be a member of a .npz: non-empty,
// valid UTF-8 without NUL or backslash, and a relative slash-separated
// path without "." or ".." elements.
func validName(name string) bool {
	if name == "" || !utf8.ValidString(name) || strings.ContainsAny(name, "\x00\\") {
		return false
	}
	for _, e := range strings.Split(name, "/") {
		if e == "" || e == "." || e == ".." {
			return false
		}
	}
	return true
}

// chunkElems is how many elements are converted per read or write call.
const chunkElems = 1 << 15

// readData reads the h.count elements that follow header h. At most
// trusted elements are allocated before their bytes have arrived; beyond
// that the slice grows by doubling, so a header that overstates the data
// cannot make the reader allocate much more than the data it really has.
func readData(r io.Reader, h npyHeader, trusted int64) (any, error) {
	n, t := int(h.count), int(min(h.count, max(trusted, 0)))
	le := binary.LittleEndian
	switch h.dt.name {
	case "float32":
		return readSlice(r, n, t, 4, func(d []float32, s []byte) {
			for i := range d {
				d[i] = math.Float32frombits(le.Uint32(s[4*i:]))
			}
		})
	case "float16":
		return readSlice(r, n, t, 2, func(d []float32, s []byte) {
			for i := range d {
				d[i] = half.Float32(le.Uint16(s[2*i:]))
			}
		})
	case "float64":
		return readSlice(r, n, t, 8, func(d []float64, s []byte) {
			for i := range d {
				d[i] = math.Float64frombits(le.Uint64(s[8*i:]))
			}
		})
	case "uint8":
		return readSlice(r, n, t, 1, func(d []uint8, s []byte) { copy(d, s) })
	case "uint16":
		return readSlice(r, n, t, 2, func(d []uint16, s []byte) {
			for i := range d {
				d[i] = le.Uint16(s[2*i:])
			}
		})
	case "int32":
		return readSlice(r, n, t, 4, func(d []int32, s []byte) {
			for i := range d {
				d[i] = int32(le.Uint32(s[4*i:]))
			}
		})
	case "int64":
		return readSlice(r, n, t, 8, func(d []int64, s []byte) {
			for i := range d {
				d[i] = int64(le.Uint64(s[8*i:]))
			}
		})
	}
	panic("npz: unhandled dtype " + h.dt.name)
}

func readSlice[T any](r io.Reader, n, trusted, size int, conv func([]T, []byte)) ([]T, error) {
	buf := make([]byte, min(n, chunkElems)*size)
	out := make([]T, 0, max(trusted, min(n, chunkElems)))
	for len(out) < n {
		k := min(n-len(out), chunkElems)
		if _, err := io.ReadFull(r, buf[:k*size]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		m := len(out)
		if m+k > cap(out) {
			grown := make([]T, m, min(n, max(2*cap(out), m+k)))
			copy(grown, out)
			out = grown
		}
		out = out[:m+k]
		conv(out[m:], buf[:k*size])
	}
	return out, nil
}

// writeData writes the elements of data, whose type check has accepted.
func writeData(w io.Writer, dt dtype, data any) error {
	le := binary.LittleEndian
	switch v := data.(type) {
	case []float32:
		if dt.name == "float16" {
			return writeSlice(w, v, 2, func(d []byte, s []float32) {
				for i, x := range s {
					le.PutUint16(d[2*i:], half.FromFloat32(x))
				}
			})
		}
		return writeSlice(w, v, 4, func(d []byte, s []float32) {
			for i, x := range s {
				le.PutUint32(d[4*i:], math.Float32bits(x))
			}
		})
	case []float64:
		return writeSlice(w, v, 8, func(d []byte, s []float64) {
			for i, x := range s {
				le.PutUint64(d[8*i:], math.Float64bits(x))
			}
		})
	case []uint8:
		_, err := w.Write(v)
		return err
	case []uint16:
		return writeSlice(w, v, 2, func(d []byte, s []uint16) {
			for i, x := range s {
				le.PutUint16(d[2*i:], x)
			}
		})
	case []int32:
		return writeSlice(w, v, 4, func(d []byte, s []int32) {
			for i, x := range s {
				le.PutUint32(d[4*i:], uint32(x))
			}
		})
	case []int64:
		return writeSlice(w, v, 8, func(d []byte, s []int64) {
			for i, x := range s {
				le.PutUint64(d[8*i:], uint64(x))
			}
		})
	}
	return fmt.Errorf("npz: unsupported Data type %T", data)
}

func writeSlice[T any](w io.Writer, data []T, size int, conv func([]byte, []T)) error {
	buf := make([]byte, min(len(data), chunkElems)*size)
	for len(data) > 0 {
		k := min(len(data), chunkElems)
		conv(buf[:k*size], data[:k])
		if _, err := w.Write(buf[:k*size]); err != nil {
			return err
		}
		data = data[k:]
	}
	return nil
}
