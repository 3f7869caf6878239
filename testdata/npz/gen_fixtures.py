#!/usr/bin/python3
"""Regenerates the numpy-written fixtures of package npz.

Run from this directory with Debian's numpy (1.24):  /usr/bin/python3 gen_fixtures.py
Output is deterministic (fixed seed); all files are small.
"""
import io
import zipfile

import numpy as np

rng = np.random.default_rng(20240601)

f16_special = np.array(
    [0.0, -0.0, 1.0, -2.5, 65504.0, -65504.0, 6.1035156e-05, 5.9604645e-08,
     -5.9604645e-08, 3.0517578e-05, np.inf, -np.inf, np.nan, 0.33325195],
    dtype=np.float16)

arrays = dict(
    float32=np.arange(6, dtype=np.float32).reshape(2, 3) / 7 - 0.25,
    float16=f16_special,
    float16_widened=f16_special.astype(np.float32),
    float64=np.array(3.141592653589793),  # shape ()
    uint8=np.array([0, 1, 127, 255], dtype=np.uint8),
    uint16=np.array([[0, 256], [65535, 7]], dtype=np.uint16),
    int32=np.array([-2147483648, -1, 2147483647], dtype=np.int32),
    int64=np.array([-(2**63), -1, 0, 2**63 - 1], dtype=np.int64).reshape(2, 1, 2),
    empty=np.zeros((0, 3), dtype=np.float32),
)
np.savez("dtypes.npz", **arrays)
np.savez_compressed("dtypes_compressed.npz", **arrays)
for name in ["float32", "float16", "float64", "uint8", "uint16", "int32", "int64", "empty"]:
    np.save("%s.npy" % name, arrays[name])

# float32 -> float16 rounding as numpy does it: random values over the
# float16 range, exact midpoints between neighbouring halves (ties), and
# values around the overflow and underflow thresholds.
h = rng.integers(0, 0x7c00, 1500, dtype=np.uint16)
lo = h.view(np.float16).astype(np.float32)
hi = (h + 1).view(np.float16).astype(np.float32)
mid = ((lo.astype(np.float64) + hi.astype(np.float64)) / 2).astype(np.float32)
mag = np.exp2(rng.uniform(-27, 17, 1500)).astype(np.float32)
sign = np.where(rng.random(1500) < 0.5, -1, 1).astype(np.float32)
x = np.concatenate([mid, -mid, mag * sign,
                    np.array([65519.99, 65520.0, 65520.01, 2.9802322e-08, 2.9802326e-08,
                              1e-30, 1e30, np.inf, np.nan], dtype=np.float32)]).astype(np.float32)
np.savez_compressed("float16_rounding.npz", x=x, half=x.astype(np.float16).view(np.uint16))

# Trajectories.
T, S, M = 5, 2, 3
np.savez_compressed(
    "traj_codes.npz",
    codes=rng.integers(0, 64, (T, S, M), dtype=np.uint8),
    actions=np.array([-1, 0, 1, -1, 5], dtype=np.int32),
    episode_start=np.array([0, 3], dtype=np.int64),
    entropy_bits_per_state=np.array(12.5),
)
np.savez(
    "traj_obs16.npz",
    obs=rng.standard_normal((4, 2, 3)).astype(np.float16),
    actions=np.array([-1, 2, 2, 7], dtype=np.int64),
    episode_start=np.array([0], dtype=np.int32),
)
np.savez_compressed(
    "traj_2d.npz",
    codes=rng.integers(0, 1024, (3, 4), dtype=np.uint16),
    obs=rng.standard_normal((3, 6)).astype(np.float32),
)

# Negatives.
np.savez("fortran.npz", a=np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
np.save("fortran.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
np.savez("object.npz", a=np.array([{"x": 1}, None], dtype=object))
np.save("object.npy", np.array([{"x": 1}, None], dtype=object))
np.savez("bigendian.npz", a=np.arange(4, dtype=">f4"))
np.savez("int16.npz", a=np.arange(4, dtype=np.int16))
np.savez("structured.npz", a=np.zeros(2, dtype=[("x", "<f4"), ("y", "<i4")]))
# A 1-D Fortran-flagged array has the same layout as C order: accepted.
buf = io.BytesIO()
np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": True, "shape": (3,)})
buf.write(np.array([1, 2, 3], dtype="<f4").tobytes())
open("fortran_1d.npy", "wb").write(buf.getvalue())

full = open("dtypes.npz", "rb").read()
open("truncated.npz", "wb").write(full[: len(full) // 2])
whole = open("float32.npy", "rb").read()
open("truncated.npy", "wb").write(whole[:-3])
# A stored member whose data is cut short but whose zip directory is intact.
with zipfile.ZipFile("short_member.npz", "w", zipfile.ZIP_STORED) as z:
    b = io.BytesIO()
    np.save(b, np.arange(10, dtype=np.int64))
    z.writestr(zipfile.ZipInfo("a.npy", date_time=(1980, 1, 1, 0, 0, 0)), b.getvalue()[:-8])
