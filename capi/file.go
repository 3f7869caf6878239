package main

// #include "capi.h"
import "C"

import (
	"unsafe"

	"github.com/wmzip/wmzip/capi/internal/capi"
)

//export wmz_file_open
func wmz_file_open(path *C.wmz_cchar, c C.wmz_codec, options *C.wmz_cchar, out *C.wmz_file) (rc C.int) {
	defer guard(&rc)
	p, err := str(path, "path")
	if err != nil {
		return status(err)
	}
	return handleOut(out, func() (capi.Handle, error) { return capi.OpenFile(p, capi.Handle(c), text(options)) })
}

//export wmz_file_codec
func wmz_file_codec(f C.wmz_file, out *C.wmz_codec) (rc C.int) {
	defer guard(&rc)
	return handleOut(out, func() (capi.Handle, error) { return capi.FileCodec(capi.Handle(f)) })
}

//export wmz_file_episodes
func wmz_file_episodes(f C.wmz_file, lens *C.int64_t, capacity C.size_t, n *C.size_t) (rc C.int) {
	defer guard(&rc)
	ls, err := capi.FileEpisodes(capi.Handle(f))
	if err != nil {
		return status(err)
	}
	if n != nil {
		*n = C.size_t(len(ls))
	}
	if lens == nil || uint64(capacity) < uint64(len(ls)) {
		return status(capi.BufferError(len(ls)*8, uint64(capacity)*8))
	}
	out := unsafe.Slice((*int64)(unsafe.Pointer(lens)), len(ls))
	for i, l := range ls {
		out[i] = int64(l)
	}
	return 0
}

//export wmz_file_state
func wmz_file_state(f C.wmz_file, e, t C.int64_t, action *C.int64_t, dst unsafe.Pointer, capacity C.size_t, width C.int) (rc C.int) {
	defer guard(&rc)
	ei, ti, err := indices(e, t)
	if err != nil {
		return status(err)
	}
	d, err := codes(dst, capacity, width)
	if err != nil {
		return status(err)
	}
	a, err := capi.FileState(capi.Handle(f), ei, ti, d)
	if err != nil {
		return status(err)
	}
	if action != nil {
		*action = C.int64_t(a)
	}
	return 0
}

// indices returns an episode and a step as ints.
func indices(e, t C.int64_t) (int, int, error) {
	ei, err := index(e)
	if err != nil {
		return 0, 0, err
	}
	ti, err := index(t)
	return ei, ti, err
}

//export wmz_file_obs
func wmz_file_obs(f C.wmz_file, e, t C.int64_t, action *C.int64_t, obs *C.float, capacity C.size_t) (rc C.int) {
	defer guard(&rc)
	ei, ti, err := indices(e, t)
	if err != nil {
		return status(err)
	}
	o, err := array[float32](unsafe.Pointer(obs), capacity, "floats")
	if err != nil {
		return status(err)
	}
	a, err := capi.FileObs(capi.Handle(f), ei, ti, o)
	if err != nil {
		return status(err)
	}
	if action != nil {
		*action = C.int64_t(a)
	}
	return 0
}

//export wmz_file_states
func wmz_file_states(f C.wmz_file, e, from, to C.int64_t, actions *C.int64_t, dst unsafe.Pointer, codesCap C.size_t, width C.int, obs *C.float, obsCap C.size_t) (rc C.int) {
	defer guard(&rc)
	ei, fi, err := indices(e, from)
	if err != nil {
		return status(err)
	}
	ti, err := index(to)
	if err != nil {
		return status(err)
	}
	var acts []int64
	if actions != nil {
		if ti < fi {
			return status(capi.Inputf("steps %d to %d", fi, ti-1))
		}
		if acts, err = array[int64](unsafe.Pointer(actions), C.size_t(ti-fi), "actions"); err != nil {
			return status(err)
		}
	}
	d, err := codes(dst, codesCap, width)
	if err != nil {
		return status(err)
	}
	o, err := array[float32](unsafe.Pointer(obs), obsCap, "floats")
	if err != nil {
		return status(err)
	}
	return status(capi.FileStates(capi.Handle(f), ei, fi, ti, acts, d, o))
}

//export wmz_file_meta
func wmz_file_meta(f C.wmz_file, e C.int64_t, buf *C.char, capacity C.size_t, size *C.size_t) (rc C.int) {
	defer guard(&rc)
	ei, err := index(e)
	if err != nil {
		return status(err)
	}
	meta, err := capi.FileMeta(capi.Handle(f), ei)
	if err != nil {
		return status(err)
	}
	return status(output(meta, unsafe.Pointer(buf), capacity, size, true))
}

//export wmz_file_info
func wmz_file_info(f C.wmz_file, buf *C.char, capacity C.size_t, size *C.size_t) (rc C.int) {
	defer guard(&rc)
	b, err := capi.FileInfo(capi.Handle(f))
	if err != nil {
		return status(err)
	}
	return status(output(b, unsafe.Pointer(buf), capacity, size, true))
}

//export wmz_file_verify
func wmz_file_verify(f C.wmz_file) (rc C.int) {
	defer guard(&rc)
	return status(capi.FileVerify(capi.Handle(f)))
}

//export wmz_file_close
func wmz_file_close(f C.wmz_file) (rc C.int) {
	defer guard(&rc)
	return status(capi.CloseFile(capi.Handle(f)))
}
