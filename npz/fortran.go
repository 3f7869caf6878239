package npz

import (
	"bytes"
	"io"
)

// Arrays in Fortran (column-major) order, as np.asfortranarray or a
// transpose saves them, are read whole and converted to C order: a
// trajectory's states are rows, which Fortran order scatters over the
// whole array. Memory is the array's bytes twice, within the limits of
// WithMaxBytes.

// readFortran reads the count elements of a Fortran-order array from r
// and returns their bytes in C order. The buffer grows with the bytes
// that arrive, never with the declared shape alone.
func readFortran(r io.Reader, h npyHeader) ([]byte, error) {
	want := h.count * int64(h.dt.size)
	var buf bytes.Buffer
	if n, err := io.Copy(&buf, io.LimitReader(r, want)); err != nil {
		return nil, err
	} else if n < want {
		return nil, io.ErrUnexpectedEOF
	}
	return fortranToC(buf.Bytes(), h.shape, h.dt.size), nil
}

// fortranToC returns the elements of src, size bytes each, of an array of
// the given shape stored in Fortran order (the first index varying
// fastest), in C order (the last index varying fastest).
func fortranToC(src []byte, shape []int, size int) []byte {
	n := len(shape)
	stride := make([]int, n) // C-order strides, in elements
	s := 1
	for k := n - 1; k >= 0; k-- {
		stride[k] = s
		s *= shape[k]
	}
	dst := make([]byte, len(src))
	idx := make([]int, n)
	at := 0 // the C-order position of idx
	for f := 0; f < len(src); f += size {
		copy(dst[at*size:], src[f:f+size])
		for k := range n { // next index in Fortran order
			idx[k]++
			at += stride[k]
			if idx[k] < shape[k] {
				break
			}
			at -= idx[k] * stride[k]
			idx[k] = 0
		}
	}
	return dst
}
