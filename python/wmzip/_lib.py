"""The C library beneath the package, loaded with ctypes, and its errors.

ctypes releases the GIL for the length of every call into the library, so
long calls (training, a distortion search, decoding an episode) let other
Python threads run, and reads of one File from several threads run at
once."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import sys
from ctypes import POINTER, c_char_p, c_double, c_int, c_int32, c_int64, c_size_t, c_uint64, c_void_p
from typing import Any, Callable

API_VERSION = 1


def _library_path() -> str:
    path = os.environ.get("WMZIP_LIBRARY")
    if path:
        return path
    name = {"darwin": "libwmzip.dylib", "win32": "wmzip.dll"}.get(sys.platform, "libwmzip.so")
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), name)


class CodecInfo(ctypes.Structure):
    _fields_ = [
        ("slots", c_int64),
        ("subspaces", c_int64),
        ("alphabet", c_int64),
        ("dim", c_int64),
        ("has_gate", c_int32),
        ("quantizer_vectors", c_int64),
        ("quantizer_distortion", c_double),
        ("quantizer_cosine", c_double),
        ("model_id", ctypes.c_char * 64),
    ]


class Trajectory(ctypes.Structure):
    _fields_ = [
        ("states", c_int64),
        ("slots", c_int64),
        ("obs", c_void_p),
        ("dim", c_int64),
        ("codes", c_void_p),
        ("subspaces", c_int64),
        ("code_width", c_int32),
        ("actions", c_void_p),
        ("episode_start", c_void_p),
        ("episodes", c_int64),
    ]


_H = c_uint64
_PH = POINTER(c_uint64)
_PSIZE = POINTER(c_size_t)
_P = c_void_p  # arrays are passed as addresses

_PROTOTYPES: dict[str, tuple] = {
    "wmz_api_version": (c_int, []),
    "wmz_errmsg": (c_char_p, []),
    "wmz_codec_load": (c_int, [c_char_p, _PH]),
    "wmz_codec_read": (c_int, [_P, c_size_t, _PH]),
    "wmz_codec_train": (c_int, [POINTER(Trajectory), c_char_p, _PH]),
    "wmz_codec_bytes": (c_int, [_H, _P, c_size_t, _PSIZE]),
    "wmz_codec_save": (c_int, [_H, c_char_p]),
    "wmz_codec_describe": (c_int, [_H, POINTER(CodecInfo)]),
    "wmz_codec_members": (c_int, [_H, _PH, c_size_t, _PSIZE]),
    "wmz_codec_summary": (c_int, [_H, _P, c_size_t, _PSIZE]),
    "wmz_codec_quantize": (c_int, [_H, _P, c_size_t, _P, c_size_t, c_int]),
    "wmz_codec_reconstruct": (c_int, [_H, _P, c_size_t, c_int, _P, c_size_t]),
    "wmz_codec_free": (c_int, [_H]),
    "wmz_file_open": (c_int, [c_char_p, _H, c_char_p, _PH]),
    "wmz_file_codec": (c_int, [_H, _PH]),
    "wmz_file_episodes": (c_int, [_H, _P, c_size_t, _PSIZE]),
    "wmz_file_state": (c_int, [_H, c_int64, c_int64, _P, _P, c_size_t, c_int]),
    "wmz_file_obs": (c_int, [_H, c_int64, c_int64, _P, _P, c_size_t]),
    "wmz_file_states": (c_int, [_H, c_int64, c_int64, c_int64, _P, _P, c_size_t, c_int, _P, c_size_t]),
    "wmz_file_meta": (c_int, [_H, c_int64, _P, c_size_t, _PSIZE]),
    "wmz_file_info": (c_int, [_H, _P, c_size_t, _PSIZE]),
    "wmz_file_verify": (c_int, [_H]),
    "wmz_file_close": (c_int, [_H]),
    "wmz_writer_create": (c_int, [c_char_p, _H, c_char_p, _PH]),
    "wmz_writer_begin": (c_int, [_H, c_char_p, c_size_t]),
    "wmz_writer_codes": (c_int, [_H, _P, c_size_t, _P, c_size_t, c_int]),
    "wmz_writer_obs": (c_int, [_H, _P, c_size_t, _P, c_size_t]),
    "wmz_writer_level": (c_int, [_H, c_int]),
    "wmz_writer_flush": (c_int, [_H]),
    "wmz_writer_close": (c_int, [_H]),
    "wmz_writer_abort": (c_int, [_H]),
    "wmz_writer_account": (c_int, [_H, _P, c_size_t, _PSIZE]),
    "wmz_writer_free": (c_int, [_H]),
    "wmz_reader_open": (c_int, [c_char_p, _H, c_char_p, _PH]),
    "wmz_reader_codec": (c_int, [_H, _PH]),
    "wmz_reader_next": (c_int, [_H]),
    "wmz_reader_meta": (c_int, [_H, _P, c_size_t, _PSIZE]),
    "wmz_reader_state": (c_int, [_H, _P, _P, c_size_t, c_int]),
    "wmz_reader_obs": (c_int, [_H, _P, _P, c_size_t]),
    "wmz_reader_level": (c_int, [_H, POINTER(c_int)]),
    "wmz_reader_close": (c_int, [_H]),
    "wmz_search_open": (c_int, [POINTER(c_char_p), c_size_t, _H, c_char_p, _PH]),
    "wmz_search_codec": (c_int, [_H, _PH]),
    "wmz_search_info": (c_int, [_H, _P, c_size_t, _PSIZE]),
    "wmz_search_floats": (c_int, [_H, _P, c_size_t, c_int, c_size_t, c_char_p, _P, _P, _P, _P, c_size_t, _PSIZE]),
    "wmz_search_codes": (c_int, [_H, _P, c_size_t, c_int, c_int, c_size_t, c_char_p, _P, _P, _P, _P, c_size_t, _PSIZE]),
    "wmz_search_close": (c_int, [_H]),
    "wmz_catalog_update": (c_int, [c_char_p, c_char_p, _P, c_size_t, _PSIZE]),
    "wmz_catalog_load": (c_int, [c_char_p, _P, c_size_t, _PSIZE]),
}


def _load() -> ctypes.CDLL:
    path = _library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(
            f"wmzip: cannot load its C library {path} ({e}); install the package with pip, which builds it with Go"
        ) from None
    for name, (res, args) in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    if lib.wmz_api_version() != API_VERSION:
        raise ImportError(f"wmzip: the C library {path} has interface {lib.wmz_api_version()}, this package {API_VERSION}")
    return lib


lib = _load()

# ---- errors ---------------------------------------------------------------

OK, EOF = 0, 1
BUFFER = -12


class Error(Exception):
    """The base of wmzip's errors; str() is the library's message."""

    code = -14


class InputError(Error, ValueError):
    """An invalid argument: an option out of range, an array of the wrong
    shape, a lossy mode asked of a codec of codes only without a retention
    gate, observations given to a codec without a quantizer, a distortion
    target below what the quantizer alone loses."""

    code = -1


class CorruptError(Error):
    """Bytes that are not a valid .wmz file or model file (.wmm)."""

    code = -2


class ChecksumError(CorruptError):
    """A record of a file whose checksum does not match its bytes."""

    code = -3


class ModelMismatchError(Error):
    """A codec other than the one the file was written with."""

    code = -4


class NoModelError(Error):
    """A file that embeds no model, opened without a codec."""

    code = -5


class TooLargeError(Error):
    """A file or option beyond a memory limit of the decoder."""

    code = -6


class ClosedError(Error, ValueError):
    """A call on a closed File, Writer or Memory."""

    code = -7


class UnsupportedError(Error):
    """A valid file of a version or feature this library does not read."""

    code = -8


class SignatureError(Error):
    """A read with a public key refused: the file is unsigned, signed by
    another key, older than required, or altered (the message names the
    chunk)."""

    code = -15


class InternalError(Error):
    """A bug of the library, which it survived: please report it."""

    code = -13


for _c in (Error, InputError, CorruptError, ChecksumError, ModelMismatchError, NoModelError, TooLargeError, ClosedError,
           UnsupportedError, InternalError, SignatureError):
    _c.__module__ = "wmzip"

_CLASSES: dict[int, type[Exception]] = {
    c.code: c
    for c in (InputError, CorruptError, ChecksumError, ModelMismatchError, NoModelError, TooLargeError, ClosedError,
              UnsupportedError, InternalError, SignatureError)
}
_OS_ERRORS = {-9: (FileNotFoundError, errno.ENOENT), -10: (PermissionError, errno.EACCES), -11: (OSError, None)}


def error(code: int, filename: str | None = None) -> Exception:
    """The exception of status code, with the thread's message."""
    msg = (lib.wmz_errmsg() or b"").decode("utf-8", "replace")
    if code in _OS_ERRORS:
        cls, no = _OS_ERRORS[code]
        if no is None:
            return cls(msg)
        return cls(no, msg, filename) if filename else cls(no, msg)
    return _CLASSES.get(code, Error)(msg)


def check(code: int, filename: str | None = None) -> int:
    """Raises the error of a negative status; returns the others."""
    if code < 0:
        raise error(code, filename)
    return code


def call(name: str, *args: Any, filename: str | None = None) -> int:
    """Calls the library's function name; raises its error."""
    return check(getattr(lib, name)(*args), filename)


def out_bytes(fn: Callable[..., int], *args: Any, text: bool = False, guess: int = 4096) -> bytes:
    """The output of a function of the variable-size convention (buffer,
    capacity, size)."""
    size = c_size_t(0)
    cap = guess
    while True:
        buf = ctypes.create_string_buffer(cap)
        rc = fn(*args, buf, cap, ctypes.byref(size))
        if rc == BUFFER:
            cap = size.value + (1 if text else 0)
            continue
        check(rc)
        return buf.raw[: size.value]


def out_json(fn: Callable[..., int], *args: Any) -> dict:
    return json.loads(out_bytes(fn, *args, text=True))


def options(**kw: Any) -> bytes | None:
    """A JSON object of the options that are not None."""
    d = {k: v for k, v in kw.items() if v is not None}
    return json.dumps(d).encode() if d else None
