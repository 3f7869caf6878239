"""numpy arrays as the C library takes them: C-contiguous, of its dtypes,
shaped as states."""

from __future__ import annotations

import numpy as np

from ._lib import InputError


def addr(a: np.ndarray | None) -> int | None:
    """The address of a's data, None for no array."""
    return None if a is None else a.ctypes.data


def floats(x, what: str = "observations") -> np.ndarray:
    """x as C-contiguous float32 (float16 and float64 converted)."""
    a = np.asarray(x)
    if a.dtype.kind != "f":
        if a.dtype.kind in "iub" and a.size == 0:
            a = a.astype(np.float32)
        else:
            raise InputError(f"{what} of dtype {a.dtype}: want floating point (float32, float16 or float64)")
    return _aligned(np.ascontiguousarray(a, dtype=np.float32))


def codes(x, what: str = "codes") -> np.ndarray:
    """x as C-contiguous uint8 or uint16 codes; other integer dtypes are
    checked and narrowed to uint16."""
    a = np.asarray(x)
    if a.dtype == np.uint8 or a.dtype == np.uint16:
        return _aligned(np.ascontiguousarray(a))
    if a.dtype.kind not in "iu":
        raise InputError(f"{what} of dtype {a.dtype}: want unsigned integers (uint8 or uint16)")
    if a.size and (a.min() < 0 or a.max() > 0xFFFF):
        raise InputError(f"{what} range {a.min()} to {a.max()}: want 0 to 65535")
    return _aligned(np.ascontiguousarray(a, dtype=np.uint16))


def ints(x, what: str) -> np.ndarray:
    """x as C-contiguous int64, one dimension."""
    a = np.asarray(x)
    if a.ndim != 1:
        raise InputError(f"{what} of shape {a.shape}: want one dimension")
    if a.size == 0:
        return np.zeros(0, np.int64)
    if a.dtype.kind not in "iu":
        raise InputError(f"{what} of dtype {a.dtype}: want integers")
    if a.dtype == np.uint64 and a.max() > np.iinfo(np.int64).max:
        raise InputError(f"{what} reach {a.max()}, beyond int64")
    return _aligned(np.ascontiguousarray(a, dtype=np.int64))


def _aligned(a: np.ndarray) -> np.ndarray:
    """a, or a copy of it aligned to its items' size: arrays unpickled from
    out-of-band buffers (Dask's) may be at any address, and the library
    refuses unaligned ones."""
    return a if a.flags.aligned else a.copy()


def states(a: np.ndarray, slots: int, width: int, what: str, single: bool = False) -> tuple[tuple[int, ...], int]:
    """The leading shape and number of states of an array of states of
    slots × width values: shaped (..., slots, width) or (..., slots*width);
    with single, exactly one state."""
    shape = a.shape
    if len(shape) >= 2 and shape[-2:] == (slots, width):
        lead = shape[:-2]
    elif len(shape) >= 1 and shape[-1] == slots * width:
        lead = shape[:-1]
    else:
        want = f"(..., {slots}, {width})" if slots > 1 else f"(..., {width})"
        raise InputError(f"{what} of shape {shape}: want {want}, states of {slots} slots × {width}")
    if single and lead not in ((), (1,)):
        raise InputError(f"{what} of shape {shape}: want one state, ({slots}, {width})")
    n = 1
    for d in lead:
        n *= d
    return lead, n
