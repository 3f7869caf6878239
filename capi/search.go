package main

// #include "capi.h"
import "C"

import (
	"unsafe"

	"github.com/wmzip/wmzip/capi/internal/capi"
)

//export wmz_search_open
func wmz_search_open(paths *C.wmz_cpath, n C.size_t, c C.wmz_codec, options *C.wmz_cchar, out *C.wmz_search) (rc C.int) {
	defer guard(&rc)
	ps, err := array[*C.char](unsafe.Pointer(paths), n, "paths")
	if err != nil {
		return status(err)
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		if names[i], err = str((*C.wmz_cchar)(p), "path"); err != nil {
			return status(err)
		}
	}
	return handleOut(out, func() (capi.Handle, error) { return capi.OpenSearch(names, capi.Handle(c), text(options)) })
}

//export wmz_search_codec
func wmz_search_codec(s C.wmz_search, out *C.wmz_codec) (rc C.int) {
	defer guard(&rc)
	return handleOut(out, func() (capi.Handle, error) { return capi.SearchCodec(capi.Handle(s)) })
}

//export wmz_search_info
func wmz_search_info(s C.wmz_search, buf *C.char, capacity C.size_t, size *C.size_t) (rc C.int) {
	defer guard(&rc)
	b, err := capi.SearchInfo(capi.Handle(s))
	if err != nil {
		return status(err)
	}
	return status(output(b, unsafe.Pointer(buf), capacity, size, true))
}

//export wmz_search_floats
func wmz_search_floats(s C.wmz_search, queries *C.wmz_cfloat, n C.size_t, states C.int, k C.size_t, options *C.wmz_cchar,
	episode, step, slot *C.int64_t, distance *C.double, capacity C.size_t, size *C.size_t) (rc C.int) {
	defer guard(&rc)
	q, err := array[float32](unsafe.Pointer(queries), n, "floats")
	if err != nil {
		return status(err)
	}
	return searchRun(k, episode, step, slot, distance, capacity, size, func(k int, r capi.Results) (int, error) {
		return capi.SearchFloats(capi.Handle(s), q, states != 0, k, text(options), r)
	})
}

//export wmz_search_codes
func wmz_search_codes(s C.wmz_search, queries *C.wmz_cvoid, n C.size_t, width C.int, states C.int, k C.size_t, options *C.wmz_cchar,
	episode, step, slot *C.int64_t, distance *C.double, capacity C.size_t, size *C.size_t) (rc C.int) {
	defer guard(&rc)
	q, err := codes(unsafe.Pointer(queries), n, width)
	if err != nil {
		return status(err)
	}
	return searchRun(k, episode, step, slot, distance, capacity, size, func(k int, r capi.Results) (int, error) {
		return capi.SearchCodes(capi.Handle(s), q, states != 0, k, text(options), r)
	})
}

// searchRun turns the result arrays of a search into slices and runs fn,
// which returns the entries the results need: that goes to *size.
func searchRun(k C.size_t, episode, step, slot *C.int64_t, distance *C.double, capacity C.size_t, size *C.size_t,
	fn func(k int, r capi.Results) (int, error)) C.int {
	ki, err := count(k)
	if err != nil {
		return status(err)
	}
	var r capi.Results
	if r.Episode, err = optional[int64](unsafe.Pointer(episode), capacity, "episodes"); err != nil {
		return status(err)
	}
	if r.Step, err = optional[int64](unsafe.Pointer(step), capacity, "steps"); err != nil {
		return status(err)
	}
	if r.Slot, err = optional[int64](unsafe.Pointer(slot), capacity, "slots"); err != nil {
		return status(err)
	}
	if r.Distance, err = optional[float64](unsafe.Pointer(distance), capacity, "distances"); err != nil {
		return status(err)
	}
	need, err := fn(ki, r)
	if size != nil {
		*size = C.size_t(need)
	}
	return status(err)
}

// optional is array of an output that may be NULL (not wanted) whatever
// the capacity.
func optional[T any](p unsafe.Pointer, n C.size_t, what string) ([]T, error) {
	if p == nil {
		return nil, nil
	}
	return array[T](p, n, what)
}

//export wmz_search_close
func wmz_search_close(s C.wmz_search) (rc C.int) {
	defer guard(&rc)
	return status(capi.CloseSearch(capi.Handle(s)))
}
