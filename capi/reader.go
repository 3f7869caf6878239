package main

// #include "capi.h"
import "C"

import (
	"unsafe"

	"github.com/wmzip/wmzip/capi/internal/capi"
)

//export wmz_reader_open
func wmz_reader_open(path *C.wmz_cchar, c C.wmz_codec, options *C.wmz_cchar, out *C.wmz_reader) (rc C.int) {
	defer guard(&rc)
	p, err := str(path, "path")
	if err != nil {
		return status(err)
	}
	return handleOut(out, func() (capi.Handle, error) { return capi.OpenReader(p, capi.Handle(c), text(options)) })
}

//export wmz_reader_codec
func wmz_reader_codec(r C.wmz_reader, out *C.wmz_codec) (rc C.int) {
	defer guard(&rc)
	return handleOut(out, func() (capi.Handle, error) { return capi.ReaderCodec(capi.Handle(r)) })
}

//export wmz_reader_next
func wmz_reader_next(r C.wmz_reader) (rc C.int) {
	defer guard(&rc)
	return status(capi.ReaderNext(capi.Handle(r)))
}

//export wmz_reader_meta
func wmz_reader_meta(r C.wmz_reader, buf *C.char, capacity C.size_t, size *C.size_t) (rc C.int) {
	defer guard(&rc)
	meta, err := capi.ReaderMeta(capi.Handle(r))
	if err != nil {
		return status(err)
	}
	return status(output(meta, unsafe.Pointer(buf), capacity, size, true))
}

//export wmz_reader_state
func wmz_reader_state(r C.wmz_reader, action *C.int64_t, dst unsafe.Pointer, capacity C.size_t, width C.int) (rc C.int) {
	defer guard(&rc)
	d, err := codes(dst, capacity, width)
	if err != nil {
		return status(err)
	}
	a, err := capi.ReaderState(capi.Handle(r), d)
	if err == nil && action != nil {
		*action = C.int64_t(a)
	}
	return status(err)
}

//export wmz_reader_obs
func wmz_reader_obs(r C.wmz_reader, action *C.int64_t, obs *C.float, capacity C.size_t) (rc C.int) {
	defer guard(&rc)
	o, err := array[float32](unsafe.Pointer(obs), capacity, "floats")
	if err != nil {
		return status(err)
	}
	a, err := capi.ReaderObs(capi.Handle(r), o)
	if err == nil && action != nil {
		*action = C.int64_t(a)
	}
	return status(err)
}

//export wmz_reader_level
func wmz_reader_level(r C.wmz_reader, level *C.int) (rc C.int) {
	defer guard(&rc)
	if level == nil {
		return status(capi.Inputf("no place for the level (NULL)"))
	}
	l, err := capi.ReaderLevel(capi.Handle(r))
	if err == nil {
		*level = C.int(l)
	}
	return status(err)
}

//export wmz_reader_close
func wmz_reader_close(r C.wmz_reader) (rc C.int) {
	defer guard(&rc)
	return status(capi.CloseReader(capi.Handle(r)))
}
