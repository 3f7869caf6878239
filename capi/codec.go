package main

// #include "capi.h"
import "C"

import (
	"context"
	"math"
	"unsafe"

	"github.com/wmzip/wmzip/capi/internal/capi"
)

//export wmz_codec_load
func wmz_codec_load(path *C.wmz_cchar, out *C.wmz_codec) (rc C.int) {
	defer guard(&rc)
	p, err := str(path, "path")
	if err != nil {
		return status(err)
	}
	return handleOut(out, func() (capi.Handle, error) { return capi.LoadCodec(p) })
}

// handleOut stores the handle fn returns to *out.
func handleOut(out *C.uint64_t, fn func() (capi.Handle, error)) C.int {
	if out == nil {
		return status(capi.Inputf("no place for the handle (NULL)"))
	}
	h, err := fn()
	if err != nil {
		return status(err)
	}
	*out = C.uint64_t(h)
	return 0
}

//export wmz_codec_read
func wmz_codec_read(data *C.wmz_cvoid, size C.size_t, out *C.wmz_codec) (rc C.int) {
	defer guard(&rc)
	b, err := array[byte](unsafe.Pointer(data), size, "bytes")
	if err != nil {
		return status(err)
	}
	return handleOut(out, func() (capi.Handle, error) { return capi.ReadCodec(b) })
}

//export wmz_codec_train
func wmz_codec_train(t *C.wmz_ctrajectory, options *C.wmz_cchar, out *C.wmz_codec) (rc C.int) {
	defer guard(&rc)
	if t == nil {
		return status(capi.Inputf("no trajectory (NULL)"))
	}
	tr, err := trajectory(t)
	if err != nil {
		return status(err)
	}
	return handleOut(out, func() (capi.Handle, error) { return capi.Train(context.Background(), tr, text(options)) })
}

// trajectory reads a wmz_trajectory's arrays.
func trajectory(t *C.wmz_ctrajectory) (tr capi.Trajectory, err error) {
	for _, v := range []C.int64_t{t.states, t.slots, t.dim, t.subspaces, t.episodes} {
		if v < 0 {
			return tr, capi.Inputf("a trajectory with a negative size (%d)", int64(v))
		}
	}
	tr = capi.Trajectory{States: int(t.states), Slots: int(t.slots), Dim: int(t.dim), Subspaces: int(t.subspaces)}
	if t.obs != nil {
		n, err := product(t.states, t.slots, t.dim)
		if err != nil {
			return tr, err
		}
		if tr.Obs, err = array[float32](unsafe.Pointer(t.obs), n, "observation values"); err != nil {
			return tr, err
		}
	}
	if t.codes != nil {
		n, err := product(t.states, t.slots, t.subspaces)
		if err != nil {
			return tr, err
		}
		if tr.Codes, err = codes(unsafe.Pointer(t.codes), n, C.int(t.code_width)); err != nil {
			return tr, err
		}
	}
	if t.actions != nil {
		if tr.Actions, err = array[int64](unsafe.Pointer(t.actions), C.size_t(t.states), "actions"); err != nil {
			return tr, err
		}
	}
	if t.episode_start != nil {
		tr.EpisodeStart, err = array[int64](unsafe.Pointer(t.episode_start), C.size_t(t.episodes), "episode starts")
	}
	return tr, err
}

// product returns the product of non-negative sizes, checked for
// overflow.
func product(xs ...C.int64_t) (C.size_t, error) {
	p := uint64(1)
	for _, x := range xs {
		if x != 0 && p > math.MaxInt64/uint64(x) {
			return 0, capi.Inputf("a trajectory of more than %d values", int64(math.MaxInt64))
		}
		p *= uint64(x)
	}
	return C.size_t(p), nil
}

//export wmz_codec_bytes
func wmz_codec_bytes(c C.wmz_codec, buf unsafe.Pointer, capacity C.size_t, size *C.size_t) (rc C.int) {
	defer guard(&rc)
	b, err := capi.CodecBytes(capi.Handle(c))
	if err != nil {
		return status(err)
	}
	return status(output(b, buf, capacity, size, false))
}

//export wmz_codec_save
func wmz_codec_save(c C.wmz_codec, path *C.wmz_cchar) (rc C.int) {
	defer guard(&rc)
	p, err := str(path, "path")
	if err != nil {
		return status(err)
	}
	return status(capi.SaveCodec(capi.Handle(c), p))
}

//export wmz_codec_describe
func wmz_codec_describe(c C.wmz_codec, info *C.wmz_codec_info) (rc C.int) {
	defer guard(&rc)
	if info == nil {
		return status(capi.Inputf("no place for the info (NULL)"))
	}
	in, err := capi.InfoOfCodec(capi.Handle(c))
	if err != nil {
		return status(err)
	}
	info.slots, info.subspaces, info.alphabet, info.dim = C.int64_t(in.Slots), C.int64_t(in.Subspaces), C.int64_t(in.Alphabet), C.int64_t(in.Dim)
	info.has_gate = 0
	if in.HasGate {
		info.has_gate = 1
	}
	info.quantizer_vectors = C.int64_t(in.QuantizerVectors)
	info.quantizer_distortion, info.quantizer_cosine = C.double(in.QuantizerDistortion), C.double(in.QuantizerCosine)
	id := unsafe.Slice((*byte)(unsafe.Pointer(&info.model_id[0])), len(info.model_id))
	clear(id)
	copy(id[:len(id)-1], in.ModelID)
	return 0
}

//export wmz_codec_members
func wmz_codec_members(c C.wmz_codec, members *C.wmz_codec, capacity C.size_t, n *C.size_t) (rc C.int) {
	defer guard(&rc)
	room, err := count(capacity)
	if err != nil {
		return status(err)
	}
	if members == nil {
		room = 0
	}
	k, hs, err := capi.CodecMembers(capi.Handle(c), room)
	if err != nil {
		return status(err)
	}
	if n != nil {
		*n = C.size_t(k)
	}
	if hs == nil {
		return status(capi.BufferError(k*8, uint64(room)*8))
	}
	out := unsafe.Slice((*C.wmz_codec)(unsafe.Pointer(members)), len(hs))
	for i, h := range hs {
		out[i] = C.wmz_codec(h)
	}
	return 0
}

//export wmz_codec_summary
func wmz_codec_summary(c C.wmz_codec, buf *C.char, capacity C.size_t, size *C.size_t) (rc C.int) {
	defer guard(&rc)
	b, err := capi.CodecSummary(capi.Handle(c))
	if err != nil {
		return status(err)
	}
	return status(output(b, unsafe.Pointer(buf), capacity, size, true))
}

//export wmz_codec_quantize
func wmz_codec_quantize(c C.wmz_codec, obs *C.wmz_cfloat, n C.size_t, dst unsafe.Pointer, capacity C.size_t, width C.int) (rc C.int) {
	defer guard(&rc)
	o, err := array[float32](unsafe.Pointer(obs), n, "observation values")
	if err != nil {
		return status(err)
	}
	d, err := codes(dst, capacity, width)
	if err != nil {
		return status(err)
	}
	return status(capi.Quantize(capi.Handle(c), o, d))
}

//export wmz_codec_reconstruct
func wmz_codec_reconstruct(c C.wmz_codec, src *C.wmz_cvoid, n C.size_t, width C.int, obs *C.float, capacity C.size_t) (rc C.int) {
	defer guard(&rc)
	s, err := codes(unsafe.Pointer(src), n, width)
	if err != nil {
		return status(err)
	}
	o, err := array[float32](unsafe.Pointer(obs), capacity, "floats")
	if err != nil {
		return status(err)
	}
	return status(capi.Reconstruct(capi.Handle(c), s, o))
}

//export wmz_codec_free
func wmz_codec_free(c C.wmz_codec) (rc C.int) {
	defer guard(&rc)
	return status(capi.FreeCodec(capi.Handle(c)))
}
