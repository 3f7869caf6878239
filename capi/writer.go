package main

// #include "capi.h"
import "C"

import (
	"unsafe"

	"github.com/wmzip/wmzip/capi/internal/capi"
)

//export wmz_writer_create
func wmz_writer_create(path *C.wmz_cchar, c C.wmz_codec, options *C.wmz_cchar, out *C.wmz_writer) (rc C.int) {
	defer guard(&rc)
	p, err := str(path, "path")
	if err != nil {
		return status(err)
	}
	return handleOut(out, func() (capi.Handle, error) { return capi.CreateWriter(p, capi.Handle(c), text(options)) })
}

//export wmz_writer_begin
func wmz_writer_begin(w C.wmz_writer, meta *C.wmz_cchar, size C.size_t) (rc C.int) {
	defer guard(&rc)
	m, err := array[byte](unsafe.Pointer(meta), size, "metadata bytes")
	if err != nil {
		return status(err)
	}
	if meta != nil && m == nil {
		m = []byte{}
	}
	return status(capi.WriterBegin(capi.Handle(w), m))
}

//export wmz_writer_codes
func wmz_writer_codes(w C.wmz_writer, actions *C.wmz_cint64, states C.size_t, src *C.wmz_cvoid, n C.size_t, width C.int) (rc C.int) {
	defer guard(&rc)
	acts, k, err := actionsIn(actions, states)
	if err != nil {
		return status(err)
	}
	s, err := codes(unsafe.Pointer(src), n, width)
	if err != nil {
		return status(err)
	}
	return status(capi.WriterCodes(capi.Handle(w), acts, k, s))
}

// actionsIn returns the actions of states states (nil for NULL) and
// their count.
func actionsIn(actions *C.wmz_cint64, states C.size_t) ([]int64, int, error) {
	k, err := count(states)
	if err != nil {
		return nil, 0, err
	}
	if actions == nil {
		return nil, k, nil
	}
	acts, err := array[int64](unsafe.Pointer(actions), states, "actions")
	return acts, k, err
}

//export wmz_writer_obs
func wmz_writer_obs(w C.wmz_writer, actions *C.wmz_cint64, states C.size_t, obs *C.wmz_cfloat, n C.size_t) (rc C.int) {
	defer guard(&rc)
	acts, k, err := actionsIn(actions, states)
	if err != nil {
		return status(err)
	}
	o, err := array[float32](unsafe.Pointer(obs), n, "observation values")
	if err != nil {
		return status(err)
	}
	return status(capi.WriterObs(capi.Handle(w), acts, k, o))
}

//export wmz_writer_level
func wmz_writer_level(w C.wmz_writer, level C.int) (rc C.int) {
	defer guard(&rc)
	return status(capi.WriterLevel(capi.Handle(w), int(level)))
}

//export wmz_writer_flush
func wmz_writer_flush(w C.wmz_writer) (rc C.int) {
	defer guard(&rc)
	return status(capi.WriterFlush(capi.Handle(w)))
}

//export wmz_writer_close
func wmz_writer_close(w C.wmz_writer) (rc C.int) {
	defer guard(&rc)
	return status(capi.CloseWriter(capi.Handle(w)))
}

//export wmz_writer_abort
func wmz_writer_abort(w C.wmz_writer) (rc C.int) {
	defer guard(&rc)
	return status(capi.AbortWriter(capi.Handle(w)))
}

//export wmz_writer_account
func wmz_writer_account(w C.wmz_writer, buf *C.char, capacity C.size_t, size *C.size_t) (rc C.int) {
	defer guard(&rc)
	b, err := capi.WriterAccount(capi.Handle(w))
	if err != nil {
		return status(err)
	}
	return status(output(b, unsafe.Pointer(buf), capacity, size, true))
}

//export wmz_writer_free
func wmz_writer_free(w C.wmz_writer) (rc C.int) {
	defer guard(&rc)
	return status(capi.FreeWriter(capi.Handle(w)))
}
