"""Damaged files, wrong codecs, missing files: each a Python exception of
its own carrying the library's message, never a crash."""

from __future__ import annotations

import errno

import numpy as np
import pytest

import wmzip
from conftest import episodes_of


@pytest.fixture(scope="module")
def good(codec, run, tmp_path_factory):
    p = tmp_path_factory.mktemp("err") / "good.wmz"
    wmzip.encode(p, codec, episodes_of(run)[:2], keyframe=16)
    return p.read_bytes()


def test_hierarchy():
    assert issubclass(wmzip.ChecksumError, wmzip.CorruptError)
    assert issubclass(wmzip.InputError, ValueError) and issubclass(wmzip.ClosedError, ValueError)
    for c in (wmzip.CorruptError, wmzip.ModelMismatchError, wmzip.NoModelError, wmzip.TooLargeError,
              wmzip.UnsupportedError, wmzip.InternalError, wmzip.InputError, wmzip.ClosedError):
        assert issubclass(c, wmzip.Error) and c.__module__ == "wmzip"


def test_missing(codec, tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        wmzip.open(tmp_path / "none.wmz", codec)
    assert e.value.errno == errno.ENOENT and "none.wmz" in str(e.value)


def test_not_wmz(codec, tmp_path):
    p = tmp_path / "x.wmz"
    p.write_bytes(b"PK\x03\x04 this is a zip, not a wmz" * 10)
    with pytest.raises(wmzip.CorruptError) as e:
        wmzip.open(p, codec)
    assert "wmz" in str(e.value)
    p.write_bytes(b"")
    with pytest.raises(wmzip.CorruptError):
        wmzip.open(p, codec)


def test_wrong_codec(good, codec, codes_codec, tmp_path):
    p = tmp_path / "g.wmz"
    p.write_bytes(good)
    with pytest.raises(wmzip.ModelMismatchError):
        wmzip.open(p, codes_codec)
    with pytest.raises(wmzip.NoModelError):
        wmzip.open(p)


def test_damage(good, codec, tmp_path):
    """Every single-byte flip in the payload is caught: on open, on the
    read of the state, or by verify — as a CorruptError."""
    p = tmp_path / "d.wmz"
    caught = 0
    for off in range(64, len(good) - 8, max(1, (len(good) - 72) // 60)):
        b = bytearray(good)
        b[off] ^= 0x5A
        p.write_bytes(bytes(b))
        try:
            with wmzip.open(p, codec) as f:
                for e in range(len(f)):
                    f.episode(e)
                f.verify()
        except wmzip.CorruptError:
            caught += 1
    assert caught > 0


def test_truncated(good, codec, tmp_path):
    p = tmp_path / "t.wmz"
    for n in (10, 64, len(good) // 2, len(good) - 1):
        p.write_bytes(good[:n])
        with pytest.raises(wmzip.Error):
            with wmzip.open(p, codec) as f:
                f.verify()
