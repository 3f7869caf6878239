// Command capi is wmzip's C library: built in this folder with
//
//	go build -buildmode=c-shared -o libwmzip.so .
//
// it exports the functions of wmzip.h, the interface's documentation. The
// C library is a module of its own (capi/go.mod), so that the library
// module stays free of cgo and of what the C interface reaches beyond the
// codec; this is the only package of the repository that uses cgo. Each
// function turns its C arguments into Go values and calls package
// capi/internal/capi, which does the work. Every export recovers a panic
// into WMZ_ERR_INTERNAL, so that a bug costs the call, not the caller's
// process.
package main

// #include "capi.h"
import "C"

import (
	"math"
	"unsafe"

	"github.com/wmzip/wmzip/capi/internal/capi"
)

func main() {}

// apiVersion is WMZ_API_VERSION, which the header and the library must
// agree on.
const apiVersion = 1

//export wmz_api_version
func wmz_api_version() C.int { return apiVersion }

// status returns the status code of err, setting the thread's error
// message.
func status(err error) C.int {
	code := capi.Code(err)
	if code < 0 {
		C.wmz_set_error(C.CString(err.Error()))
	}
	return C.int(code)
}

// guard recovers a panic of an export into its status rc.
func guard(rc *C.int) {
	if v := recover(); v != nil {
		*rc = status(capi.Recovered(v))
	}
}

// str returns the C string p, which names what.
func str(p *C.wmz_cchar, what string) (string, error) {
	if p == nil {
		return "", capi.Inputf("no %s (NULL)", what)
	}
	return C.GoString((*C.char)(unsafe.Pointer(p))), nil
}

// text returns the C string p as bytes: nil for NULL.
func text(p *C.wmz_cchar) []byte {
	if p == nil {
		return nil
	}
	return []byte(C.GoString((*C.char)(unsafe.Pointer(p))))
}

// count returns n as an int.
func count(n C.size_t) (int, error) {
	if uint64(n) > math.MaxInt {
		return 0, capi.Inputf("size %d too large", uint64(n))
	}
	return int(n), nil
}

// index returns an episode or step as an int.
func index(x C.int64_t) (int, error) {
	if int64(x) > math.MaxInt || int64(x) < math.MinInt {
		return 0, capi.Inputf("index %d out of range", int64(x))
	}
	return int(x), nil
}

// array returns the n elements of type T at p, checked for alignment;
// nil for NULL with n 0.
func array[T any](p unsafe.Pointer, n C.size_t, what string) ([]T, error) {
	k, err := count(n)
	if err != nil {
		return nil, err
	}
	if p == nil {
		if k > 0 {
			return nil, capi.Inputf("%d %s at NULL", k, what)
		}
		return nil, nil
	}
	var zero T
	if uintptr(p)%unsafe.Alignof(zero) != 0 {
		return nil, capi.Inputf("%s at %p, not aligned to %d bytes", what, p, unsafe.Alignof(zero))
	}
	return unsafe.Slice((*T)(p), k), nil
}

// codes returns the n codes of width bytes at p: none for NULL.
func codes(p unsafe.Pointer, n C.size_t, width C.int) (capi.Codes, error) {
	if p == nil && n == 0 {
		return capi.Codes{}, nil
	}
	switch width {
	case 1:
		a, err := array[uint8](p, n, "codes")
		return capi.Codes{U8: a}, err
	case 2:
		a, err := array[uint16](p, n, "codes")
		return capi.Codes{U16: a}, err
	}
	return capi.Codes{}, capi.Inputf("codes %d bytes wide: want 1 or 2", int(width))
}

// output copies b to buf, which holds capacity bytes, and its size to
// *size; text adds a NUL.
func output(b []byte, buf unsafe.Pointer, capacity C.size_t, size *C.size_t, text bool) error {
	if size != nil {
		*size = C.size_t(len(b))
	}
	need := len(b)
	if text {
		need++
	}
	if buf == nil || uint64(capacity) < uint64(need) {
		return capi.BufferError(need, uint64(capacity))
	}
	out := unsafe.Slice((*byte)(buf), need)
	copy(out, b)
	if text {
		out[len(b)] = 0
	}
	return nil
}
